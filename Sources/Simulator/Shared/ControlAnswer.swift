import Foundation
import HTTP
import Logging

/// Both simulators' control APIs answer a failed request the same way: `{"error": …}` with 404 for an unknown
/// subscription or app, 409 for a request the current state forbids, 400 for a bad request, 500 otherwise.
enum ControlAnswer {
    /// A control request's JSON body as `type` (an empty body is `{}`); a body of another shape is a 400.
    static func decode<T: Decodable>(_ type: T.Type, _ body: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: body.isEmpty ? Data("{}".utf8) : body)
        } catch {
            throw ControlBodyError(message: "the body is not a JSON object of the expected shape: \(error)")
        }
    }

    /// `value` as a 200 JSON answer, keys sorted so equal answers are equal bytes.
    static func encode<T: Encodable>(_ value: T) throws -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return HTTPResponse(status: 200, headers: [("content-type", "application/json")], body: try encoder.encode(value))
    }

    /// `handle`'s answer, or the answer for the error it threw (an unexpected one is logged).
    static func run(logger: Logger, _ handle: () async throws -> HTTPResponse) async -> HTTPResponse {
        do {
            return try await handle()
        } catch let error as SimulatorError {
            let status = switch error.code {
            case .notFound, .unknownApp: 404
            case .invalidState, .nothingToResend: 409
            default: 400
            }
            return answer(status, error.message)
        } catch let error as ControlBodyError {
            return answer(400, error.message)
        } catch {
            logger.error("control request failed", ["error": .string("\(error)")])
            return answer(500, "\(error)")
        }
    }

    private static func answer(_ status: Int, _ message: String) -> HTTPResponse {
        .json(status, "{\"error\":\(JSON.quoted(message))}")
    }
}

struct ControlBodyError: Error {
    let message: String
}
