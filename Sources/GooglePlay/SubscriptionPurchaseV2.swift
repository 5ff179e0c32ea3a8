import Foundation

/// `purchases.subscriptionsv2.get`'s answer: the authoritative state of one purchase token, with Google's
/// field names. Enum values (`subscriptionState`, `acknowledgementState`) are kept verbatim, so a value Google
/// adds later is seen as itself rather than failing the whole answer.
public struct SubscriptionPurchaseV2: Sendable {
    public let kind: String?
    /// ISO 3166-1 alpha-2 billing country when the subscription was granted.
    public let regionCode: String?
    /// Not set for pending subscriptions.
    public let startTime: Date?
    /// `SUBSCRIPTION_STATE_ACTIVE`, `…_CANCELED`, …, verbatim.
    public let subscriptionState: String?
    /// Deprecated by Google; `lineItems[].latestSuccessfulOrderId` replaces it. Kept for on-call only.
    public let latestOrderId: String?
    /// The token this purchase replaced (upgrade, downgrade, re-signup, plan type change).
    public let linkedPurchaseToken: String?
    public let pausedStateContext: PausedStateContext?
    public let canceledStateContext: CanceledStateContext?
    /// `testPurchase` was present: a licence tester's purchase, which moves no money.
    public let isTestPurchase: Bool
    /// `ACKNOWLEDGEMENT_STATE_PENDING` or `…_ACKNOWLEDGED`, verbatim.
    public let acknowledgementState: String?
    public let externalAccountIdentifiers: ExternalAccountIdentifiers?
    public let outOfAppPurchaseContext: OutOfAppPurchaseContext?
    public let lineItems: [LineItem]
    /// The resource as Google sent it, without insignificant whitespace: kept on the purchase for on-call, with
    /// the fields this version does not model.
    public let json: Data

    /// Decodes Google's JSON. Throws `DecodingError` when it is not a `SubscriptionPurchaseV2` object (times must
    /// be RFC 3339, `lineItems` an array).
    public init(json: Data) throws {
        let fields = try GoogleJSON.decoder().decode(Fields.self, from: json)
        kind = fields.kind
        regionCode = fields.regionCode
        startTime = fields.startTime
        subscriptionState = fields.subscriptionState
        latestOrderId = fields.latestOrderId
        linkedPurchaseToken = fields.linkedPurchaseToken
        pausedStateContext = fields.pausedStateContext
        canceledStateContext = fields.canceledStateContext
        isTestPurchase = fields.testPurchase != nil
        acknowledgementState = fields.acknowledgementState
        externalAccountIdentifiers = fields.externalAccountIdentifiers
        outOfAppPurchaseContext = fields.outOfAppPurchaseContext
        lineItems = fields.lineItems ?? []
        self.json = GoogleJSON.compact(json)
    }

    /// One subscribed item (the base plan, or an add-on): its product, expiry and the latest order that paid for it.
    public struct LineItem: Sendable, Hashable, Decodable {
        public let productId: String?
        /// When the item expired or will expire unless access is extended; the grace period's end while in grace.
        public let expiryTime: Date?
        public let autoRenewingPlan: AutoRenewingPlan?
        public let prepaidPlan: PrepaidPlan?
        public let offerDetails: OfferDetails?
        /// The current offer phase's key: `basePrice`, `freeTrial`, `introductoryPrice` or `prorationPeriod`.
        public let offerPhase: String?
        /// Absent while the item is not owned yet (a deferred replacement).
        public let latestSuccessfulOrderId: String?

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productId = try container.decodeIfPresent(String.self, forKey: .productId)
            expiryTime = try container.decodeIfPresent(Date.self, forKey: .expiryTime)
            autoRenewingPlan = try container.decodeIfPresent(AutoRenewingPlan.self, forKey: .autoRenewingPlan)
            prepaidPlan = try container.decodeIfPresent(PrepaidPlan.self, forKey: .prepaidPlan)
            offerDetails = try container.decodeIfPresent(OfferDetails.self, forKey: .offerDetails)
            if container.contains(.offerPhase), try !container.decodeNil(forKey: .offerPhase) {
                let phase = try container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: .offerPhase)
                offerPhase = phase.allKeys.map(\.stringValue).sorted().first
            } else {
                offerPhase = nil
            }
            latestSuccessfulOrderId = try container.decodeIfPresent(String.self, forKey: .latestSuccessfulOrderId)
        }

        private enum CodingKeys: String, CodingKey {
            case productId, expiryTime, autoRenewingPlan, prepaidPlan, offerDetails, offerPhase, latestSuccessfulOrderId
        }
    }

    /// Present on renewing items; whether the item will renew decides `autoRenew`.
    public struct AutoRenewingPlan: Sendable, Hashable, Decodable {
        public let autoRenewEnabled: Bool?
        /// The list price without discounts or taxes: never the charge (that comes from `orders.get`).
        public let recurringPrice: GooglePlayMoney?
    }

    /// Present on prepaid items, which never renew.
    public struct PrepaidPlan: Sendable, Hashable, Decodable {
        public let allowExtendAfterTime: Date?
    }

    /// Which base plan (and discounted offer) the item was bought under: mapped to a plan price with the product.
    public struct OfferDetails: Sendable, Hashable, Decodable {
        public let basePlanId: String?
        /// Only for discounted offers.
        public let offerId: String?
        public let offerTags: [String]?
    }

    /// Only in `SUBSCRIPTION_STATE_PAUSED`.
    public struct PausedStateContext: Sendable, Hashable, Decodable {
        public let autoResumeTime: Date?
    }

    /// Who cancelled: exactly one of Google's four contexts is present.
    public struct CanceledStateContext: Sendable, Hashable, Decodable {
        /// `userInitiatedCancellation`, `systemInitiatedCancellation`, `developerInitiatedCancellation` or
        /// `replacementCancellation` (the purchase was replaced by another token).
        public let initiator: String?
        /// When the user cancelled (user-initiated only); access lasts until the items' expiry.
        public let cancelTime: Date?

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            initiator = container.allKeys.map(\.stringValue).sorted().first
            let user = AnyCodingKey(stringValue: "userInitiatedCancellation")
            if container.contains(user), try !container.decodeNil(forKey: user) {
                let details = try container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: user)
                cancelTime = try details.decodeIfPresent(Date.self, forKey: AnyCodingKey(stringValue: "cancelTime"))
            } else {
                cancelTime = nil
            }
        }
    }

    /// The identifiers the app attached to the purchase, which link it to a customer.
    public struct ExternalAccountIdentifiers: Sendable, Hashable, Decodable {
        /// Only when account linking happened in the purchase flow.
        public let externalAccountId: String?
        /// What the app passed to `setObfuscatedAccountId`: the account token.
        public let obfuscatedExternalAccountId: String?
        public let obfuscatedExternalProfileId: String?
    }

    /// A resubscription from the Play subscription center after expiry; removed once acknowledged.
    public struct OutOfAppPurchaseContext: Sendable, Hashable, Decodable {
        public let expiredPurchaseToken: String?
        public let expiredExternalAccountIdentifiers: ExternalAccountIdentifiers?
    }

    /// The top-level fields as sent; `testPurchase` matters only by its presence (it is `{}`).
    private struct Fields: Decodable {
        struct Empty: Decodable {}

        let kind: String?
        let regionCode: String?
        let startTime: Date?
        let subscriptionState: String?
        let latestOrderId: String?
        let linkedPurchaseToken: String?
        let pausedStateContext: PausedStateContext?
        let canceledStateContext: CanceledStateContext?
        let testPurchase: Empty?
        let acknowledgementState: String?
        let externalAccountIdentifiers: ExternalAccountIdentifiers?
        let outOfAppPurchaseContext: OutOfAppPurchaseContext?
        let lineItems: [LineItem]?
    }
}
