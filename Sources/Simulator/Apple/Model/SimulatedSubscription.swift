/// Apple's subscription status (`status` in Get All Subscription Statuses and in notifications).
public enum SubscriptionStatus: Int, Sendable, Codable, CustomStringConvertible {
    case active = 1
    case expired = 2
    case billingRetry = 3
    case gracePeriod = 4
    case revoked = 5

    public var description: String {
        switch self {
        case .active: "active"
        case .expired: "expired"
        case .billingRetry: "billing retry"
        case .gracePeriod: "billing grace period"
        case .revoked: "revoked"
        }
    }
}

/// One subscription lineage (all transactions sharing an `originalTransactionId`). The simulator has one
/// customer per lineage, so a lineage is also everything Get Transaction History returns.
public struct SimulatedSubscription: Sendable, Equatable {
    public let originalTransactionId: String
    public let bundleId: String
    public let subscriptionGroupIdentifier: String
    public internal(set) var status: SubscriptionStatus
    public internal(set) var renewalInfo: SimulatedRenewalInfo
    /// In purchase order; the last one is the current period.
    public internal(set) var transactionIds: [String]
    /// What a refund of the current period replaced, restored if the refund is reversed.
    var beforeRevocation: Unrevoked?

    public var latestTransactionId: String { transactionIds[transactionIds.count - 1] }

    /// The status and auto-renew setting a refund revokes: a reversal returns to them (a subscription refunded
    /// in billing retry goes back to billing retry, not to a status guessed from its expired period).
    struct Unrevoked: Sendable, Equatable {
        let status: SubscriptionStatus
        let autoRenewStatus: Bool
    }
}
