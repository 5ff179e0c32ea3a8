import Foundation
import HTTP
import StrictJSON

/// A JSON request body's top-level fields, read once with the strict reader. An endpoint asks for the fields
/// it knows through a `Validation`, which collects every failure so one 422 lists them all; fields it does not
/// know are ignored, as clients of billing APIs expect when they send more than an endpoint reads.
struct RequestBody {
    enum Value {
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case null
        case other(JSONValueKind)
    }

    private(set) var values: [String: Value] = [:]

    /// An empty body is an empty object; anything else must be `application/json` (415 otherwise) holding
    /// a JSON object with each key once (400 otherwise). A number that is not an exact integer is kept as `other(.number)`.
    init(_ request: HTTPRequest) throws(APIError) {
        guard !request.body.isEmpty else { return }
        let type = request.header("content-type")?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        guard type?.lowercased() == "application/json" else {
            throw APIError(415, "Content-Type must be application/json.")
        }
        var values: [String: Value] = [:]
        do {
            try JSONReader.read(request.body) { reader in
                guard try reader.peekKind() == .object else { throw APIError(400, "The request body must be a JSON object.") }
                try reader.readObject { reader, key in
                    let name = key.description
                    // Two parsers may pick different ones of a repeated key: which one a rule saw is not guessed.
                    guard values[name] == nil else {
                        throw APIError(400, "Malformed JSON: the key \(String(name.prefix(64)).debugDescription) appears twice.")
                    }
                    switch try reader.peekKind() {
                    case .string: values[name] = try reader.readString().map(Value.string) ?? .null
                    case .bool: values[name] = try reader.readBool().map(Value.bool) ?? .null
                    case .null:
                        try reader.skipValue()
                        values[name] = .null
                    case .number:
                        // A failed read has consumed the number already: read from a copy, keep it on success.
                        var probe = reader
                        if let integer = try? probe.readInt64() {
                            reader = probe
                            values[name] = .integer(integer)
                        } else {
                            try reader.skipValue()
                            values[name] = .other(.number)
                        }
                    case let kind:
                        try reader.skipValue()
                        values[name] = .other(kind)
                    }
                }
            }
        } catch let error as APIError {
            throw error
        } catch let error as JSONReaderError {
            throw APIError(400, "Malformed JSON: \(error.reason) at byte \(error.offset).")
        } catch {
            throw APIError(400, "Malformed JSON.")
        }
        self.values = values
    }
}

/// Checks a body's fields against an endpoint's rules, collecting every failure in field order. Messages
/// name the field first (`customer_id is required`), as the reference's example does.
struct Validation {
    let body: RequestBody
    private(set) var failures: [(field: String, message: String)] = []

    init(_ body: RequestBody) {
        self.body = body
    }

    /// A string of 1…`maxLength` characters whose bytes are all in `allowed` (when given); nil when absent
    /// or invalid (and then, if `required`, a failure).
    mutating func string(_ field: String, required: Bool, maxLength: Int, allowed: ((UInt8) -> Bool)? = nil,
                         describe: String = "") -> String? {
        switch body.values[field] {
        case nil, .null?:
            if required { failures.append((field, "\(field) is required")) }
            return nil
        case .string(let value)?:
            guard !value.isEmpty else {
                failures.append((field, "\(field) is required"))
                return nil
            }
            guard value.count <= maxLength, allowed.map({ value.utf8.allSatisfy($0) }) ?? true else {
                failures.append((field, "\(field) must be \(describe.isEmpty ? "" : describe + ", ")at most \(maxLength) characters"))
                return nil
            }
            return value
        default:
            failures.append((field, "\(field) must be a string"))
            return nil
        }
    }

    /// A string that is one of `choices`.
    mutating func choice(_ field: String, required: Bool, among choices: [String]) -> String? {
        let raw = string(field, required: required, maxLength: 100)
        guard let raw else { return nil }
        guard choices.contains(raw) else {
            failures.append((field, "\(field) must be one of \(choices.joined(separator: ", "))"))
            return nil
        }
        return raw
    }

    mutating func bool(_ field: String, required: Bool) -> Bool? {
        switch body.values[field] {
        case nil, .null?:
            if required { failures.append((field, "\(field) is required")) }
            return nil
        case .bool(let value)?: return value
        default:
            failures.append((field, "\(field) must be true or false"))
            return nil
        }
    }

    mutating func integer(_ field: String, required: Bool, range: ClosedRange<Int64>) -> Int64? {
        switch body.values[field] {
        case nil, .null?:
            if required { failures.append((field, "\(field) is required")) }
            return nil
        case .integer(let value)? where range.contains(value): return value
        case .integer?:
            failures.append((field, "\(field) must be between \(range.lowerBound) and \(range.upperBound)"))
            return nil
        default:
            failures.append((field, "\(field) must be an integer"))
            return nil
        }
    }

    /// Adds a failure found by a rule of the endpoint's own.
    mutating func fail(_ field: String, _ message: String) {
        failures.append((field, message))
    }

    /// Throws the 422 when anything failed.
    func check() throws(APIError) {
        guard failures.isEmpty else { throw APIError.validation(failures) }
    }
}
