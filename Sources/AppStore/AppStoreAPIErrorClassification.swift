import Foundation
import HTTP

extension AppStoreAPIError {
    /// Apple's error numbers that its documentation and libraries mark as worth retrying outside 5xx.
    static let retryableAppleCodes: Set<Int64> = [4_040_002, 4_040_004, 4_040_006, 5_000_000, 5_000_001]
    static let transactionIdNotFound: Int64 = 4_040_010
    static let invalidRequestRevision: Int64 = 4_000_005

    /// Classifies a response whose status is not the endpoint's success. `call` names the request
    /// (method and path) for the message.
    static func classify(_ response: HTTPClientResponse, call: String, now: Date) -> AppStoreAPIError {
        let status = response.status
        let body = try? JSONDecoder().decode(ErrorBody.self, from: response.body)
        let appleCode = body?.errorCode
        let appleMessage = body?.errorMessage.map { String($0.prefix(500)) }
        let said = appleCode.map { " \($0)" + (appleMessage.map { " \"\($0)\"" } ?? "") } ?? ""
        func error(_ code: Code, _ message: String, retryAfter: Duration? = nil) -> AppStoreAPIError {
            AppStoreAPIError(code, "\(call) answered \(status)\(said): \(message)", httpStatus: status,
                             appleErrorCode: appleCode, appleErrorMessage: appleMessage, retryAfter: retryAfter)
        }
        let retryAfter = response.header("retry-after").flatMap { Self.retryAfter($0, now: now) }
        if status == 401 {
            return error(.unauthorized, "Apple refused the API token; check the connection's key id, issuer id and "
                         + "bundle id, and that the transaction belongs to this environment (Production answers 401 "
                         + "for Sandbox transactions)")
        }
        if status == 429 {
            return error(.rateLimited, "over Apple's rate limit for this app", retryAfter: retryAfter)
        }
        if status == 408 {
            return error(.requestTimeout, "the server timed out waiting for the request; try again later",
                         retryAfter: retryAfter)
        }
        if appleCode == Self.transactionIdNotFound {
            return error(.transactionNotFound, "the transaction id is unknown in this environment")
        }
        if appleCode == Self.invalidRequestRevision {
            return error(.invalidRevision, "Apple does not accept the history revision; read the history again without one")
        }
        if (500...599).contains(status) {
            return error(.serverError, "Apple's server failed; try again later", retryAfter: retryAfter)
        }
        if let appleCode, Self.retryableAppleCodes.contains(appleCode) {
            return error(.retryableAppleError, "Apple marks this error retryable", retryAfter: retryAfter)
        }
        if (400...499).contains(status) {
            return error(.rejected, "Apple rejected the request")
        }
        return error(.invalidResponse, "not a status this endpoint answers")
    }

    /// The failure of a request that got no response.
    init(transport error: HTTPClientError, call: String) {
        self.init(.transport, "\(call) got no response: \(error)", transport: error.code)
    }

    /// `Retry-After` as Apple sends it — a UNIX time in milliseconds — or, as other servers and Apple's
    /// own ports read it, delay-seconds; a UNIX time in seconds is accepted too. Integers only; the result is
    /// clamped to 0…`maximumRetryAfter`, and anything else is ignored (the job's backoff applies).
    static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.utf8.count <= 20, let number = Int64(text), number >= 0 else { return nil }
        let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let wait: Duration
        switch number {
        case ..<1_000_000_000: wait = .seconds(number)
        case ..<100_000_000_000: wait = .milliseconds(max(0, number * 1000 - nowMilliseconds))
        default: wait = .milliseconds(max(0, number - nowMilliseconds))
        }
        return min(wait, maximumRetryAfter)
    }

    /// Apple's error body, `{"errorCode": 4040010, "errorMessage": "…"}`.
    private struct ErrorBody: Decodable {
        let errorCode: Int64?
        let errorMessage: String?
    }
}
