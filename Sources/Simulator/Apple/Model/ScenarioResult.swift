/// A notification the simulator signed, and how sending it went.
public struct NotificationRecord: Sendable, Equatable, Codable {
    public let notificationUUID: String
    public let notificationType: String
    public let subtype: String?
    /// Milliseconds since 1970 on the simulated clock.
    public let signedDate: Int64
    /// The JWS exactly as posted in `{"signedPayload": …}`.
    public let signedPayload: String
    public let delivery: NotificationDelivery
}

/// The outcome of a scenario command.
public struct ScenarioResult: Sendable, Equatable, Codable {
    public let originalTransactionId: String
    /// The transaction the command is about (the new one for purchases and renewals, the refunded one for
    /// refunds) — the one a notification carries.
    public let transactionId: String
    public let status: SubscriptionStatus
    /// `nil` for a silent command.
    public let notification: NotificationRecord?
}
