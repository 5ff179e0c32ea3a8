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
public struct NotificationPayload: Decodable, Sendable {
    public let notificationType: String
    public let subtype: String?
    public let notificationUUID: String
    public let version: String?
    public let signedDate: Date?
    public let data: NotificationData?
    public let summary: Summary?
    public let externalPurchaseToken: ExternalPurchaseToken?
    public let appData: AppData?

    public struct NotificationData: Decodable, Sendable {
        public let environment: AppStoreEnvironment?
        public let appAppleId: Int64?
        public let bundleId: String?
        public let bundleVersion: String?
        public let signedTransactionInfo: String?
        public let signedRenewalInfo: String?
        /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked — as of `signedDate`.
        public let status: Int?
        public let consumptionRequestReason: String?
    }

    public struct Summary: Decodable, Sendable {
        public let environment: AppStoreEnvironment?
        public let appAppleId: Int64?
        public let bundleId: String?
        public let productId: String?
        public let requestIdentifier: String?
        public let succeededCount: Int64?
        public let failedCount: Int64?
    }

    public struct ExternalPurchaseToken: Decodable, Sendable {
        public let externalPurchaseId: String?
        public let tokenCreationDate: Date?
        public let appAppleId: Int64?
        public let bundleId: String?
    }

    public struct AppData: Decodable, Sendable {
        public let appAppleId: Int64?
        public let bundleId: String?
        public let environment: AppStoreEnvironment?
        public let signedAppTransactionInfo: String?
    }
}

/// A decoded `signedTransactionInfo`. `price` is in milliunits of `currency` (Int64, never floating point).
public struct TransactionPayload: Decodable, Sendable {
    public let transactionId: String?
    public let originalTransactionId: String?
    public let webOrderLineItemId: String?
    public let bundleId: String?
    public let productId: String?
    public let subscriptionGroupIdentifier: String?
    public let purchaseDate: Date?
    public let originalPurchaseDate: Date?
    public let expiresDate: Date?
    public let quantity: Int?
    public let type: String?
    public let appAccountToken: String?
    public let inAppOwnershipType: String?
    public let signedDate: Date?
    public let revocationReason: Int?
    public let revocationDate: Date?
    public let revocationType: String?
    /// Refunded share in milliunits (1000 = 1 %), for `REFUND_PRORATED`.
    public let revocationPercentage: Int?
    public let isUpgraded: Bool?
    public let offerType: Int?
    public let offerIdentifier: String?
    public let offerDiscountType: String?
    public let offerPeriod: String?
    public let environment: AppStoreEnvironment?
    public let storefront: String?
    public let storefrontId: String?
    public let transactionReason: String?
    public let price: Int64?
    public let currency: String?
    public let appTransactionId: String?
}

/// A decoded `signedRenewalInfo`; it has no bundle id, so only its environment can be checked.
public struct RenewalInfoPayload: Decodable, Sendable {
    public let originalTransactionId: String?
    public let productId: String?
    public let autoRenewProductId: String?
    /// 0 off, 1 on.
    public let autoRenewStatus: Int?
    public let expirationIntent: Int?
    public let isInBillingRetryPeriod: Bool?
    public let gracePeriodExpiresDate: Date?
    public let priceIncreaseStatus: Int?
    public let renewalDate: Date?
    public let recentSubscriptionStartDate: Date?
    public let signedDate: Date?
    public let renewalPrice: Int64?
    public let currency: String?
    public let offerType: Int?
    public let offerIdentifier: String?
    public let offerDiscountType: String?
    public let appAccountToken: String?
    public let environment: AppStoreEnvironment?
}
