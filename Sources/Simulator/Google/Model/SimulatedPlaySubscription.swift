import Foundation

/// One purchase token of the simulated Play Store: what `purchases.subscriptionsv2.get` reports about it.
/// An upgrade or downgrade issues a new token (`linkedPurchaseToken` points back here) and ends this one.
/// Times are milliseconds since 1970 on the simulated clock; prices are minor units of `currency`.
public struct SimulatedPlaySubscription: Sendable, Equatable {
    public let purchaseToken: String
    public let packageName: String
    public internal(set) var productId: String
    public internal(set) var basePlanId: String
    /// Only for a discounted offer, as Google reports it.
    public internal(set) var offerId: String?
    public let startTime: Int64
    public let regionCode: String
    public internal(set) var state: PlaySubscriptionState
    /// The end of the access already paid for (or granted by a grace period).
    public internal(set) var expiryTime: Int64
    public internal(set) var autoRenewEnabled: Bool
    /// What each renewal charges, tax included, and the tax share of it.
    public internal(set) var price: Int64
    public internal(set) var tax: Int64
    public let currency: String
    public internal(set) var linkedPurchaseToken: String?
    /// The token that replaced this one, if any.
    public internal(set) var replacedBy: String?
    public internal(set) var obfuscatedAccountId: String?
    public internal(set) var obfuscatedProfileId: String?
    /// A licence tester's purchase: `testPurchase: {}`, accelerated periods, at most six renewals, no tax.
    public let testPurchase: Bool
    public internal(set) var acknowledged: Bool
    /// Every order of this token, oldest first: the purchase order, then `..0`, `..1`, … for renewals.
    public internal(set) var orderIds: [String]
    public internal(set) var renewalCount: Int
    public internal(set) var autoResumeTime: Int64?
    public internal(set) var cancellation: PlayCancellation?
    /// When the renewal payment was declined: set in grace period and account hold, where a recovery
    /// within the grace period keeps the renewal date.
    public internal(set) var paymentDeclinedAt: Int64?
    /// When account hold ends (the subscription then expires unless it recovers).
    public internal(set) var accountHoldEnds: Int64?
    /// The item this purchase replaced and how (`lineItems[].itemReplacement`).
    public internal(set) var replacement: PlayItemReplacement?
    /// Google no longer answers for the token (410): it expired long ago.
    public internal(set) var noLongerAvailable: Bool

    public var latestSuccessfulOrderId: String? { orderIds.last }
}

/// The item a purchase replaced (`SubscriptionPurchaseLineItem.itemReplacement`).
public struct PlayItemReplacement: Sendable, Equatable {
    public let productId: String
    public let basePlanId: String
    /// Google's `replacementMode`: `CHARGE_PRORATED_PRICE` for the simulator's upgrades, `WITHOUT_PRORATION`
    /// for its downgrades (both take effect at once).
    public let mode: String
}
