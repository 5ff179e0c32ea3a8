import Foundation
import Logging

/// JSON for what the simulator signs and answers. Written here rather than with Foundation's
/// `JSONSerialization`, which on Linux escapes strings one character at a time and sorts keys with
/// locale-aware comparisons: with nested JWS strings of kilobytes that was most of the simulator's CPU, and
/// the simulator shares the machine with the StoreSync it stands in front of in `bench pipeline`.
enum JSONBody {
    /// Sorted keys, so equal payloads are equal bytes; slashes unescaped, as Apple writes them. Takes what
    /// the payload builders use: strings, booleans, integers, finite doubles, arrays, string-keyed
    /// dictionaries, `NSNull` and optionals (nil is `null`).
    static func encode(_ object: Any) throws -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(2048)
        try write(object, to: &out)
        return Data(out)
    }

    static func string(_ object: Any) throws -> String {
        String(decoding: try encode(object), as: UTF8.self)
    }

    /// The common shapes are tried first and keys are sorted once with their values: every answer and
    /// notification the simulator signs goes through here, dynamic casts and all.
    private static func write(_ value: Any, to out: inout [UInt8]) throws {
        switch value {
        case let string as String: JSON.appendString(string, to: &out)
        case let bool as Bool: out += (bool ? "true" : "false").utf8
        case let int as Int: out += String(int).utf8
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in object.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSON.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                try write(value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case let array as [Any]:
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try write(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let int as Int64: out += String(int).utf8
        case let int as Int32: out += String(int).utf8
        case let double as Double where double.isFinite: out += String(double).utf8
        case is NSNull: out += "null".utf8
        case let optional as any OptionalJSON:
            if let wrapped = optional.wrappedJSON { try write(wrapped, to: &out) } else { out += "null".utf8 }
        default:
            throw SimulatorError(.invalidArgument, "cannot write a \(type(of: value)) as JSON")
        }
    }
}

/// Lets `JSONBody` see through an optional stored as `Any` (a dictionary literal's `String?` value).
private protocol OptionalJSON {
    var wrappedJSON: Any? { get }
}

extension Optional: OptionalJSON {
    fileprivate var wrappedJSON: Any? { self.map { $0 as Any } }
}
