import Foundation
import HTTP
import StrictJSON

extension GooglePlayAPIError {
    /// What on-call must check when Google refuses the service account: the usual cause by far.
    static let permissionsHint = "check that the service account is invited in Play Console (Users and permissions) "
        + "with access to this app and \"View financial data, orders, and cancellation survey responses\" (plus "
        + "\"Manage orders and subscriptions\" to acknowledge), that the Google Play Android Developer API is enabled "
        + "in its Cloud project, and that the package name is right; new permissions can take up to 24-48 hours to apply"

    /// Google's standard error reasons for a quota a 403 reports (its older APIs' form of a 429): a wait helps,
    /// unlike a refused service account, which only a Play Console fix clears.
    static let quotaReasons: Set<String> = ["rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded",
                                            "dailyLimitExceeded"]

    /// Classifies an API response whose status is not the endpoint's success. `call` names the request (method
    /// and path) for the message.
    static func classify(_ response: HTTPClientResponse, call: String, now: Date) -> GooglePlayAPIError {
        let status = response.status
        let body = try? JSONReader.read(response.body, ErrorBody.init(json:))
        let reason = body?.error?.errors?.first?.reason.map { String($0.prefix(100)) }
        let googleMessage = body?.error?.message.map { String($0.prefix(300)) }
        let said = [reason, googleMessage.map { "\"\($0)\"" }].compactMap { $0 }.joined(separator: " ")
        func error(_ code: Code, _ message: String, retryAfter: Duration? = nil) -> GooglePlayAPIError {
            GooglePlayAPIError(code, "\(call) answered \(status)\(said.isEmpty ? "" : " \(said)"): \(message)",
                               httpStatus: status, reason: reason, retryAfter: retryAfter)
        }
        switch status {
        case 403 where reason.map(quotaReasons.contains) == true:
            return error(.rateLimited, "over a Google quota (answered as a 403, as Google's older quota errors are)",
                         retryAfter: retryAfter(response, now: now))
        case 401:
            return error(.unauthorized, "Google refused a freshly fetched access token; " + permissionsHint)
        case 403:
            return error(.forbidden, "the service account lacks permission; " + permissionsHint)
        case 404:
            return error(.notFound, "unknown for this package (wrong package name, or a token or order of another app)")
        case 410:
            return error(.gone, "the purchase is no longer available from Google (expired more than about 60 days ago "
                         + "or replaced); it cannot be re-fetched")
        case 429:
            return error(.rateLimited, "over Google's per-minute quota for this bucket",
                         retryAfter: retryAfter(response, now: now))
        case 500...599:
            return error(.serverError, "Google's server failed; try again later", retryAfter: retryAfter(response, now: now))
        case 400...499:
            return error(.rejected, "Google rejected the request")
        default:
            return error(.invalidResponse, "not a status this endpoint answers")
        }
    }

    /// The failure of a request that got no response.
    init(transport error: HTTPClientError, call: String) {
        self.init(.transport, "\(call) got no response: \(error)", transport: error.code)
    }

    /// `Retry-After` (delay-seconds or an HTTP-date), bounded to `maximumRetryAfter`; `nil` when absent or unreadable.
    static func retryAfter(_ response: HTTPClientResponse, now: Date) -> Duration? {
        guard case .retryable(let after?) = HTTPRetry.classify(.success(response), now: now) else { return nil }
        return min(after, maximumRetryAfter)
    }

    /// Google's JSON error body: `{"error": {"code": 404, "message": "…", "errors": [{"reason": "…"}]}}`. One that
    /// is not (a field of the wrong kind) is read as no body: the status alone classifies the answer.
    private struct ErrorBody: JSONReadable {
        struct Details: JSONReadable {
            var message: String?
            var errors: [Item]?

            init(json reader: inout JSONReader) throws {
                try reader.readObject { reader, key in
                    switch key {
                    case "message": message = try reader.readString()
                    case "errors": errors = try reader.readList(Item.self)
                    default: try reader.skipValue()
                    }
                }
            }
        }

        struct Item: JSONReadable {
            var reason: String?

            init(json reader: inout JSONReader) throws {
                try reader.readObject { reader, key in
                    switch key {
                    case "reason": reason = try reader.readString()
                    default: try reader.skipValue()
                    }
                }
            }
        }

        var error: Details?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "error": error = try reader.readOptional(Details.init(json:))
                default: try reader.skipValue()
                }
            }
        }
    }
}
