import AppStore
import Foundation

/// A subscription's renewal state, with the fields Apple's `JWSRenewalInfoDecodedPayload` carries.
public struct SimulatedRenewalInfo: Sendable, Equatable {
    public internal(set) var originalTransactionId: String
    /// The product of the current period.
    public internal(set) var productId: String
    /// The product the next renewal buys (differs after a downgrade).
    public internal(set) var autoRenewProductId: String
    public internal(set) var autoRenewStatus: Bool
    /// 1 cancelled, 2 billing error, 3 price increase not consented, 4 product not for sale, 5 other.
    public internal(set) var expirationIntent: Int?
    public internal(set) var isInBillingRetryPeriod: Bool
    public internal(set) var gracePeriodExpiresDate: Date?
    /// When the most recent purchase expires (or renews).
    public internal(set) var renewalDate: Date
    public internal(set) var recentSubscriptionStartDate: Date
    /// Milliunits of `currency` the next renewal charges.
    public internal(set) var renewalPrice: Int64
    public internal(set) var currency: String
    public internal(set) var environment: AppStoreEnvironment
    public internal(set) var appAccountToken: UUID?
}
