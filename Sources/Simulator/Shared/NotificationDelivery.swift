/// What happened to one notification POST (or its absence), so a test can assert on StoreSync's answer.
public struct NotificationDelivery: Sendable, Equatable, Codable {
    public enum Outcome: String, Sendable, Codable {
        /// No notification target is configured; the notification was only recorded.
        case notSent
        /// A `dropNextNotifications` fault swallowed it, as if lost on the way.
        case dropped
        /// The ingest answered; see `httpStatus`.
        case answered
        /// No answer: connection refused, timeout, reset; see `error`.
        case failed
    }

    public let outcome: Outcome
    public let httpStatus: Int?
    public let error: String?

    static let notSent = NotificationDelivery(outcome: .notSent, httpStatus: nil, error: nil)
    static let dropped = NotificationDelivery(outcome: .dropped, httpStatus: nil, error: nil)
    static func answered(_ status: Int) -> NotificationDelivery { .init(outcome: .answered, httpStatus: status, error: nil) }
    static func failed(_ error: String) -> NotificationDelivery { .init(outcome: .failed, httpStatus: nil, error: error) }

    /// Apple's `sendAttemptResult` for this delivery in the notification history.
    var sendAttemptResult: String? {
        switch outcome {
        case .notSent: nil
        case .dropped, .failed: "NO_RESPONSE"
        case .answered: (200...206).contains(httpStatus ?? 0) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        }
    }
}
