import Foundation
import StrictJSON

/// `purchases.subscriptionsv2.get`'s answer: the authoritative state of one purchase token, with Google's
/// field names. Enum values (`subscriptionState`, `acknowledgementState`) are kept verbatim, so a value Google
/// adds later is seen as itself rather than failing the whole answer.
///
/// Read with `JSONReader`: every field kept is checked for its kind, unknown fields are skipped, and a field
/// repeated in the document takes its last value. Fields are `private(set) var` so the readers can fill them one
/// by one as their keys come.
public struct SubscriptionPurchaseV2: Sendable {
    public private(set) var kind: String?
    /// ISO 3166-1 alpha-2 billing country when the subscription was granted.
    public private(set) var regionCode: String?
    /// Not set for pending subscriptions.
    public private(set) var startTime: Date?
    /// `SUBSCRIPTION_STATE_ACTIVE`, `…_CANCELED`, …, verbatim.
    public private(set) var subscriptionState: String?
    /// Deprecated by Google; `lineItems[].latestSuccessfulOrderId` replaces it. Kept for on-call only.
    public private(set) var latestOrderId: String?
    /// The token this purchase replaced (upgrade, downgrade, re-signup, plan type change).
    public private(set) var linkedPurchaseToken: String?
    public private(set) var pausedStateContext: PausedStateContext?
    public private(set) var canceledStateContext: CanceledStateContext?
    /// `testPurchase` was present: a licence tester's purchase, which moves no money.
    public private(set) var isTestPurchase = false
    /// `ACKNOWLEDGEMENT_STATE_PENDING` or `…_ACKNOWLEDGED`, verbatim.
    public private(set) var acknowledgementState: String?
    public private(set) var externalAccountIdentifiers: ExternalAccountIdentifiers?
    public private(set) var outOfAppPurchaseContext: OutOfAppPurchaseContext?
    public private(set) var lineItems: [LineItem] = []
    /// The resource as Google sent it, without insignificant whitespace: kept on the purchase for on-call, with
    /// the fields this version does not model.
    public private(set) var json = Data()

    /// Reads Google's JSON. Throws `JSONReaderError`, naming the field at fault, when it is not a
    /// `SubscriptionPurchaseV2` object (times must be RFC 3339, `lineItems` an array of objects).
    public init(json: Data) throws {
        try JSONReader.read(json) { reader in
            try reader.readObject { reader, key in
                switch key {
                case "kind": kind = try reader.readString()
                case "regionCode": regionCode = try reader.readString()
                case "startTime": startTime = try reader.readGoogleTime()
                case "subscriptionState": subscriptionState = try reader.readString()
                case "latestOrderId": latestOrderId = try reader.readString()
                case "linkedPurchaseToken": linkedPurchaseToken = try reader.readString()
                case "pausedStateContext": pausedStateContext = try reader.readOptional(PausedStateContext.init(json:))
                case "canceledStateContext": canceledStateContext = try reader.readOptional(CanceledStateContext.init(json:))
                // It is `{}`: only its presence matters, but it must be an object.
                case "testPurchase":
                    isTestPurchase = try reader.readOptional { try $0.readObject { reader, _ in try reader.skipValue() } } != nil
                case "acknowledgementState": acknowledgementState = try reader.readString()
                case "externalAccountIdentifiers":
                    externalAccountIdentifiers = try reader.readOptional(ExternalAccountIdentifiers.init(json:))
                case "outOfAppPurchaseContext":
                    outOfAppPurchaseContext = try reader.readOptional(OutOfAppPurchaseContext.init(json:))
                case "lineItems": lineItems = try reader.readList(LineItem.self) ?? []
                default: try reader.skipValue()
                }
            }
        }
        self.json = GoogleJSON.compact(json)
    }

    /// One subscribed item (the base plan, or an add-on): its product, expiry and the latest order that paid for it.
    public struct LineItem: Sendable, Hashable, JSONReadable {
        public private(set) var productId: String?
        /// When the item expired or will expire unless access is extended; the grace period's end while in grace.
        public private(set) var expiryTime: Date?
        public private(set) var autoRenewingPlan: AutoRenewingPlan?
        public private(set) var prepaidPlan: PrepaidPlan?
        public private(set) var offerDetails: OfferDetails?
        /// The current offer phase's key: `basePrice`, `freeTrial`, `introductoryPrice` or `prorationPeriod`.
        public private(set) var offerPhase: String?
        /// Absent while the item is not owned yet (a deferred replacement).
        public private(set) var latestSuccessfulOrderId: String?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "productId": productId = try reader.readString()
                case "expiryTime": expiryTime = try reader.readGoogleTime()
                case "autoRenewingPlan": autoRenewingPlan = try reader.readOptional(AutoRenewingPlan.init(json:))
                case "prepaidPlan": prepaidPlan = try reader.readOptional(PrepaidPlan.init(json:))
                case "offerDetails": offerDetails = try reader.readOptional(OfferDetails.init(json:))
                case "offerPhase": offerPhase = try reader.readOneof { reader, _ in try reader.skipValue() }
                case "latestSuccessfulOrderId": latestSuccessfulOrderId = try reader.readString()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// Present on renewing items; whether the item will renew decides `autoRenew`.
    public struct AutoRenewingPlan: Sendable, Hashable, JSONReadable {
        public private(set) var autoRenewEnabled: Bool?
        /// The list price without discounts or taxes: never the charge (that comes from `orders.get`).
        public private(set) var recurringPrice: GooglePlayMoney?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "autoRenewEnabled": autoRenewEnabled = try reader.readBool()
                case "recurringPrice": recurringPrice = try reader.readOptional(GooglePlayMoney.init(json:))
                default: try reader.skipValue()
                }
            }
        }
    }

    /// Present on prepaid items, which never renew.
    public struct PrepaidPlan: Sendable, Hashable, JSONReadable {
        public private(set) var allowExtendAfterTime: Date?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "allowExtendAfterTime": allowExtendAfterTime = try reader.readGoogleTime()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// Which base plan (and discounted offer) the item was bought under: mapped to a plan price with the product.
    public struct OfferDetails: Sendable, Hashable, JSONReadable {
        public private(set) var basePlanId: String?
        /// Only for discounted offers.
        public private(set) var offerId: String?
        public private(set) var offerTags: [String]?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "basePlanId": basePlanId = try reader.readString()
                case "offerId": offerId = try reader.readString()
                case "offerTags": offerTags = try reader.readStrings()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// Only in `SUBSCRIPTION_STATE_PAUSED`.
    public struct PausedStateContext: Sendable, Hashable, JSONReadable {
        public private(set) var autoResumeTime: Date?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "autoResumeTime": autoResumeTime = try reader.readGoogleTime()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// Who cancelled: exactly one of Google's four contexts is present.
    public struct CanceledStateContext: Sendable, Hashable, JSONReadable {
        /// `userInitiatedCancellation`, `systemInitiatedCancellation`, `developerInitiatedCancellation` or
        /// `replacementCancellation` (the purchase was replaced by another token).
        public private(set) var initiator: String?
        /// When the user cancelled (user-initiated only); access lasts until the items' expiry.
        public private(set) var cancelTime: Date?

        /// Only the user's context is read; the others are checked as JSON and skipped.
        public init(json reader: inout JSONReader) throws {
            var cancelTime: Date?
            initiator = try reader.readOneof { reader, key in
                switch key {
                case "userInitiatedCancellation": cancelTime = try reader.readOptional(Self.readCancelTime) ?? nil
                default: try reader.skipValue()
                }
            }
            self.cancelTime = cancelTime
        }

        /// `userInitiatedCancellation`'s `cancelTime`.
        private static func readCancelTime(_ reader: inout JSONReader) throws -> Date? {
            var time: Date?
            try reader.readObject { reader, key in
                switch key {
                case "cancelTime": time = try reader.readGoogleTime()
                default: try reader.skipValue()
                }
            }
            return time
        }
    }

    /// The identifiers the app attached to the purchase, which link it to a customer.
    public struct ExternalAccountIdentifiers: Sendable, Hashable, JSONReadable {
        /// Only when account linking happened in the purchase flow.
        public private(set) var externalAccountId: String?
        /// What the app passed to `setObfuscatedAccountId`: the account token.
        public private(set) var obfuscatedExternalAccountId: String?
        public private(set) var obfuscatedExternalProfileId: String?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "externalAccountId": externalAccountId = try reader.readString()
                case "obfuscatedExternalAccountId": obfuscatedExternalAccountId = try reader.readString()
                case "obfuscatedExternalProfileId": obfuscatedExternalProfileId = try reader.readString()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// A resubscription from the Play subscription center after expiry; removed once acknowledged.
    public struct OutOfAppPurchaseContext: Sendable, Hashable, JSONReadable {
        public private(set) var expiredPurchaseToken: String?
        public private(set) var expiredExternalAccountIdentifiers: ExternalAccountIdentifiers?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "expiredPurchaseToken": expiredPurchaseToken = try reader.readString()
                case "expiredExternalAccountIdentifiers":
                    expiredExternalAccountIdentifiers = try reader.readOptional(ExternalAccountIdentifiers.init(json:))
                default: try reader.skipValue()
                }
            }
        }
    }
}
