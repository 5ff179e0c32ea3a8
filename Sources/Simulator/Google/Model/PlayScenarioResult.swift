/// One Pub/Sub message the simulator published and every delivery of it so far. Redeliveries and duplicates
/// carry the same `messageId`, `publishTime` and `data`; only the push token is minted afresh each time.
public struct PlayPushRecord: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        case subscription
        case voidedPurchase
        case test
    }

    public struct Attempt: Sendable, Equatable, Codable {
        /// 1 for the first delivery.
        public let number: Int
        public let delivery: NotificationDelivery
    }

    public let messageId: String
    /// RFC 3339, on the simulated clock.
    public let publishTime: String
    /// The `DeveloperNotification` JSON exactly as base64-encoded into the message's `data`.
    public let data: String
    public let kind: Kind
    /// `subscriptionNotification.notificationType`, for subscription notifications.
    public let notificationType: Int?
    public let purchaseToken: String?
    /// The bad push token every delivery of this message carries, when a fault asked for one.
    public let tokenFault: PushTokenFault?
    public internal(set) var attempts: [Attempt] = []
    /// The ingest answered 102, 200, 201, 202 or 204 to one of the deliveries.
    public internal(set) var acknowledged = false
    /// Redelivery stopped after the configured number of attempts without an acknowledgement.
    public internal(set) var abandoned = false

    /// Whether Pub/Sub counts `delivery` as an acknowledgement.
    static func acknowledges(_ delivery: NotificationDelivery) -> Bool {
        delivery.outcome == .answered && [102, 200, 201, 202, 204].contains(delivery.httpStatus ?? 0)
    }
}

/// The outcome of a scenario command.
public struct PlayScenarioResult: Sendable, Equatable, Codable {
    /// The token the command is about — the new one after an upgrade or downgrade; `nil` for a test
    /// notification.
    public let purchaseToken: String?
    /// The order the command created (purchase, renewal, recovery) or refunded.
    public let orderId: String?
    public let subscriptionState: PlaySubscriptionState?
    /// The messages published, after their first delivery (and any injected duplicates); empty when silent.
    /// Redeliveries continue in the background: see `PlaySimulator.pushes`.
    public let pushes: [PlayPushRecord]
}
