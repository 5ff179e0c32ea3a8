/// One charge of the simulated Play Store, as `orders.get` reports it: the purchase, or one renewal.
/// Amounts are minor units of `currency`; times are milliseconds since 1970 on the simulated clock.
public struct SimulatedPlayOrder: Sendable, Equatable {
    /// `PROCESSED`, `REFUNDED` or `PARTIALLY_REFUNDED` (Google's `Order.state`).
    public enum State: String, Sendable, Codable {
        case processed = "PROCESSED"
        case refunded = "REFUNDED"
        case partiallyRefunded = "PARTIALLY_REFUNDED"
    }

    public struct Refund: Sendable, Equatable {
        public let time: Int64
        /// The refunded amount and its tax share.
        public let total: Int64
        public let tax: Int64
        public let partial: Bool
    }

    public let orderId: String
    public let purchaseToken: String
    public let packageName: String
    public let productId: String
    public let basePlanId: String
    public let offerId: String?
    public internal(set) var state: State
    public let createTime: Int64
    public internal(set) var lastEventTime: Int64
    /// What the buyer paid, tax included, and the tax share of it.
    public let total: Int64
    public let tax: Int64
    public let currency: String
    public let regionCode: String
    public let servicePeriodStart: Int64
    public let servicePeriodEnd: Int64
    public let testPurchase: Bool
    public internal(set) var refunds: [Refund] = []

    /// What remains refundable.
    var refundableAmount: Int64 { total - refunds.reduce(0) { $0 + $1.total } }
}

/// Who voided a purchase (`VoidedPurchase.voidedSource`).
public enum VoidedSource: Int, Sendable, Codable {
    case user = 0
    case developer = 1
    case google = 2
}

/// Why a purchase was voided (`VoidedPurchase.voidedReason`).
public enum VoidedReason: Int, Sendable, Codable {
    case other = 0
    case remorse = 1
    case notReceived = 2
    case defective = 3
    case accidentalPurchase = 4
    case fraud = 5
    case friendlyFraud = 6
    case chargeback = 7
    case unacknowledgedPurchase = 8
}

/// A voided order as the Voided Purchases API lists it.
public struct VoidedPurchaseRecord: Sendable, Equatable {
    public let purchaseToken: String
    public let orderId: String
    public let packageName: String
    public let purchaseTime: Int64
    public let voidedTime: Int64
    public let source: VoidedSource
    public let reason: VoidedReason
    /// 1 full refund, 2 quantity-based partial refund.
    public let refundType: Int
}

/// An acknowledgement StoreSync sent (`purchases.subscriptions.acknowledge`), for tests to inspect.
public struct PlayAcknowledgement: Sendable, Equatable, Codable {
    public let packageName: String
    /// The `{subscriptionId}` path segment as sent (Google no longer requires it to match).
    public let subscriptionId: String
    public let purchaseToken: String
    /// The request body exactly as received (UTF-8 JSON, possibly empty).
    public let body: String
    /// Milliseconds since 1970 on the simulated clock.
    public let receivedAt: Int64
}
