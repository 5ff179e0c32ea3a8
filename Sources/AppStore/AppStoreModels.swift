import Foundation

/// Where a signed payload says it comes from. Unknown values (`Xcode`, `LocalTesting`, future ones) are
/// kept verbatim and never match a configured environment.
public enum AppStoreEnvironment: Sendable, Hashable, Codable, CustomStringConvertible {
    case production
    case sandbox
    case other(String)

    public init(rawValue: String) {
        switch rawValue {
        case "Production": self = .production
        case "Sandbox": self = .sandbox
        default: self = .other(rawValue)
        }
    }

    public var rawValue: String {
        switch self {
        case .production: "Production"
        case .sandbox: "Sandbox"
        case .other(let value): value
        }
    }

    public var description: String { rawValue }

    /// An external purchase token's environment, which its payload does not name: Apple prefixes the ids of
    /// sandbox tokens with `SANDBOX`.
    public static func ofExternalPurchase(id: String?) -> AppStoreEnvironment {
        id?.hasPrefix("SANDBOX") == true ? .sandbox : .production
    }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The decoded `signedPayload` of an App Store Server Notification V2. Types and subtypes are strings so
/// that values Apple adds later decode and are kept, never rejected.
public struct NotificationPayload: Sendable {
    public let notificationType: String
    public let subtype: String?
    public let notificationUUID: String
    public let version: String?
    public let signedDate: Date?
    public let data: NotificationData?
    public let summary: Summary?
    public let externalPurchaseToken: ExternalPurchaseToken?
    public let appData: AppData?

    public struct NotificationData: Sendable {
        public internal(set) var environment: AppStoreEnvironment?
        public internal(set) var appAppleId: Int64?
        public internal(set) var bundleId: String?
        public internal(set) var bundleVersion: String?
        public internal(set) var signedTransactionInfo: String?
        public internal(set) var signedRenewalInfo: String?
        /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked — as of `signedDate`.
        public internal(set) var status: Int?
        public internal(set) var consumptionRequestReason: String?
    }

    public struct Summary: Sendable {
        public internal(set) var environment: AppStoreEnvironment?
        public internal(set) var appAppleId: Int64?
        public internal(set) var bundleId: String?
        public internal(set) var productId: String?
        public internal(set) var requestIdentifier: String?
        public internal(set) var succeededCount: Int64?
        public internal(set) var failedCount: Int64?
    }

    public struct ExternalPurchaseToken: Sendable {
        public internal(set) var externalPurchaseId: String?
        public internal(set) var tokenCreationDate: Date?
        public internal(set) var appAppleId: Int64?
        public internal(set) var bundleId: String?
    }

    public struct AppData: Sendable {
        public internal(set) var appAppleId: Int64?
        public internal(set) var bundleId: String?
        public internal(set) var environment: AppStoreEnvironment?
        public internal(set) var signedAppTransactionInfo: String?
    }
}

/// A decoded `signedTransactionInfo`. `price` is in milliunits of `currency` (Int64, never floating point).
public struct TransactionPayload: Sendable {
    public internal(set) var transactionId: String?
    public internal(set) var originalTransactionId: String?
    public internal(set) var webOrderLineItemId: String?
    public internal(set) var bundleId: String?
    public internal(set) var productId: String?
    public internal(set) var subscriptionGroupIdentifier: String?
    public internal(set) var purchaseDate: Date?
    public internal(set) var originalPurchaseDate: Date?
    public internal(set) var expiresDate: Date?
    public internal(set) var quantity: Int?
    public internal(set) var type: String?
    public internal(set) var appAccountToken: String?
    public internal(set) var inAppOwnershipType: String?
    public internal(set) var signedDate: Date?
    public internal(set) var revocationReason: Int?
    public internal(set) var revocationDate: Date?
    public internal(set) var revocationType: String?
    /// Refunded share in milliunits (1000 = 1 %), for `REFUND_PRORATED`.
    public internal(set) var revocationPercentage: Int?
    public internal(set) var isUpgraded: Bool?
    public internal(set) var offerType: Int?
    public internal(set) var offerIdentifier: String?
    public internal(set) var offerDiscountType: String?
    public internal(set) var offerPeriod: String?
    public internal(set) var environment: AppStoreEnvironment?
    public internal(set) var storefront: String?
    public internal(set) var storefrontId: String?
    public internal(set) var transactionReason: String?
    public internal(set) var price: Int64?
    public internal(set) var currency: String?
    public internal(set) var appTransactionId: String?
}

/// A decoded `signedRenewalInfo`; it has no bundle id, so only its environment can be checked.
public struct RenewalInfoPayload: Sendable {
    public internal(set) var originalTransactionId: String?
    public internal(set) var productId: String?
    public internal(set) var autoRenewProductId: String?
    /// 0 off, 1 on.
    public internal(set) var autoRenewStatus: Int?
    public internal(set) var expirationIntent: Int?
    public internal(set) var isInBillingRetryPeriod: Bool?
    public internal(set) var gracePeriodExpiresDate: Date?
    public internal(set) var priceIncreaseStatus: Int?
    public internal(set) var renewalDate: Date?
    public internal(set) var recentSubscriptionStartDate: Date?
    public internal(set) var signedDate: Date?
    public internal(set) var renewalPrice: Int64?
    public internal(set) var currency: String?
    public internal(set) var offerType: Int?
    public internal(set) var offerIdentifier: String?
    public internal(set) var offerDiscountType: String?
    public internal(set) var appAccountToken: String?
    public internal(set) var environment: AppStoreEnvironment?
}
