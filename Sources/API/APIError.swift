import HTTP
import Logging

/// A refusal of the Mobile Stores API, rendered in the reference's shape: `{"status": false, "message": …}`,
/// with `errors` (field → messages) only for field validation and "Customer not found" on `customer_id`.
/// The guards in front of every endpoint answer the exact bodies the reference prints instead
/// (`{"message": "Unauthenticated."}`, …): clients match on them.
public struct APIError: Error, Sendable {
    public let status: Int
    public let message: String
    /// Field → messages, in the order found; `message` is the first message of the first field.
    public let errors: [(field: String, messages: [String])]
    /// `{"message"}` alone, as the reference words authentication, scope and limit refusals.
    let bare: Bool
    public var headers: [(name: String, value: String)]

    public init(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.message = message
        errors = []
        bare = false
        self.headers = headers
    }

    private init(status: Int, message: String, errors: [(field: String, messages: [String])], bare: Bool,
                 headers: [(name: String, value: String)]) {
        self.status = status
        self.message = message
        self.errors = errors
        self.bare = bare
        self.headers = headers
    }

    /// 422 for failed fields; the first failure's message is the message.
    public static func validation(_ failures: [(field: String, message: String)]) -> APIError {
        var errors: [(field: String, messages: [String])] = []
        for failure in failures {
            if let index = errors.firstIndex(where: { $0.field == failure.field }) {
                errors[index].messages.append(failure.message)
            } else {
                errors.append((failure.field, [failure.message]))
            }
        }
        return APIError(status: 422, message: failures.first?.message ?? "The given data was invalid.", errors: errors,
                        bare: false, headers: [])
    }

    /// A field's one failure (`validation` of one).
    public static func field(_ field: String, _ message: String) -> APIError {
        validation([(field, message)])
    }

    /// The reference's bare bodies.
    static func bare(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> APIError {
        APIError(status: status, message: message, errors: [], bare: true, headers: headers)
    }

    static let unauthenticated = bare(401, "Unauthenticated.", headers: [("www-authenticate", #"Bearer realm="mobile-stores""#)])
    static let invalidScope = bare(403, "Invalid scope(s) provided.")
    static let tooManyAttempts = bare(429, "Too Many Attempts.")
    static let customerNotFound = APIError(404, "Customer not found")

    var json: JSONValue {
        var fields: [(String, JSONValue)] = bare ? [] : [("status", .bool(false))]
        fields.append(("message", .string(message)))
        if !errors.isEmpty {
            fields.append(("errors", .object(errors.map { ($0.field, .array($0.messages.map(JSONValue.string))) })))
        }
        return .object(fields)
    }

    var response: HTTPResponse {
        var response = HTTPResponse.json(status, json.text)
        response.headers += headers
        return response
    }
}
