import AppStore
import Foundation

/// One transaction of a simulated subscription, with the fields Apple's `JWSTransactionDecodedPayload`
/// carries for an auto-renewable subscription. `signedDate` is not stored: every answer is signed afresh.
public struct SimulatedTransaction: Sendable, Equatable {
    /// Bought by the customer, or received through Family Sharing (`inAppOwnershipType`).
    public enum Ownership: String, Sendable {
        case purchased = "PURCHASED"
        case familyShared = "FAMILY_SHARED"
    }

    /// Whether the customer bought the period or it renewed automatically (`transactionReason`).
    public enum Reason: String, Sendable {
        case purchase = "PURCHASE"
        case renewal = "RENEWAL"
    }

    /// An introductory offer; the simulator models the free trial.
    public struct Offer: Sendable, Equatable {
        /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
        public let type: Int
        public let discountType: String

        public static let freeTrial = Offer(type: 1, discountType: "FREE_TRIAL")
    }

    public struct Revocation: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case refundFull = "REFUND_FULL"
            case refundProrated = "REFUND_PRORATED"
            case familyRevoke = "FAMILY_REVOKE"
        }

        public let date: Date
        public let kind: Kind
        /// Refunded share in milliunits (100000 = 100 %), only for `REFUND_PRORATED`.
        public let percentage: Int?
        /// 0 other reason, 1 an issue with the app; absent for family revocations and upgrades.
        public let reason: Int?
    }

    public static let type = "Auto-Renewable Subscription"

    public internal(set) var transactionId: String
    public internal(set) var originalTransactionId: String
    public internal(set) var webOrderLineItemId: String
    public internal(set) var bundleId: String
    public internal(set) var productId: String
    public internal(set) var subscriptionGroupIdentifier: String
    public internal(set) var purchaseDate: Date
    public internal(set) var originalPurchaseDate: Date
    public internal(set) var expiresDate: Date
    public internal(set) var inAppOwnershipType: Ownership
    public internal(set) var appAccountToken: UUID?
    /// Milliunits of `currency` (price × 1000), as Apple reports it.
    public internal(set) var price: Int64
    public internal(set) var currency: String
    public internal(set) var transactionReason: Reason
    public internal(set) var offer: Offer?
    public internal(set) var isUpgraded = false
    public internal(set) var revocation: Revocation?
    public internal(set) var environment: AppStoreEnvironment
    public internal(set) var storefront: String
    public internal(set) var storefrontId: String
}
