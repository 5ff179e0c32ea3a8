/// The answer to a `CONSUMPTION_REQUEST` (Send Consumption Information v2). Apple weighs it when deciding
/// the customer's refund; `validate()` refuses what Apple's server would reject, so a bad answer fails
/// before it spends the 12-hour window on retries.
public struct ConsumptionRequest: Sendable, Equatable, Encodable {
    /// Whether the app delivered a working purchase, in Apple's v2 words.
    public enum DeliveryStatus: String, Sendable, Encodable, CaseIterable {
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// The outcome the developer asks Apple for.
    public enum RefundPreference: String, Sendable, Encodable, CaseIterable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }

    /// The disputed transaction's product type, Apple's `type` strings. Not sent: it decides which fields
    /// Apple accepts.
    public enum ProductType: String, Sendable, CaseIterable {
        case autoRenewableSubscription = "Auto-Renewable Subscription"
        case nonRenewingSubscription = "Non-Renewing Subscription"
        case consumable = "Consumable"
        case nonConsumable = "Non-Consumable"
    }

    /// Must be `true`: without the customer's consent Apple wants no answer at all.
    public var customerConsented: Bool
    public var deliveryStatus: DeliveryStatus
    public var sampleContentProvided: Bool
    /// Share consumed in milliunits (100000 = 100 %).
    public var consumptionPercentage: Int?
    public var refundPreference: RefundPreference?
    public var productType: ProductType

    public init(customerConsented: Bool, deliveryStatus: DeliveryStatus, sampleContentProvided: Bool,
                consumptionPercentage: Int? = nil, refundPreference: RefundPreference? = nil, productType: ProductType) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
        self.productType = productType
    }

    /// Throws `.invalidRequest` for what Apple documents as rejected (the `consumptionPercentage` and
    /// `ConsumptionRequest` pages): no consent; a percentage outside 0…100000; a non-zero percentage for
    /// undelivered content; any percentage on an auto-renewable subscription (Apple computes that share from
    /// elapsed time); and `GRANT_PRORATED` on any other product without a percentage strictly between 0 and
    /// 100000.
    public func validate() throws(AppStoreAPIError) {
        func invalid(_ reason: String) -> AppStoreAPIError {
            AppStoreAPIError(.invalidRequest, "consumption request: \(reason)")
        }
        guard customerConsented else {
            throw invalid("customerConsented must be true; without the customer's consent, do not answer the "
                          + "CONSUMPTION_REQUEST at all")
        }
        if let percentage = consumptionPercentage {
            guard (0...100_000).contains(percentage) else {
                throw invalid("consumptionPercentage \(percentage) is outside 0...100000 (milliunits of a percent)")
            }
            guard deliveryStatus == .delivered || percentage == 0 else {
                throw invalid("consumptionPercentage must be 0 when deliveryStatus is \(deliveryStatus.rawValue)")
            }
            guard productType != .autoRenewableSubscription else {
                throw invalid("omit consumptionPercentage on an auto-renewable subscription; Apple computes the share "
                              + "from elapsed time")
            }
        }
        if refundPreference == .grantProrated && productType != .autoRenewableSubscription {
            guard let percentage = consumptionPercentage, (1..<100_000).contains(percentage) else {
                throw invalid("GRANT_PRORATED on a \(productType.rawValue) needs a consumptionPercentage between 1 "
                              + "and 99999, got \(consumptionPercentage.map(String.init) ?? "none")")
            }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case customerConsented, deliveryStatus, sampleContentProvided, consumptionPercentage, refundPreference
    }
}
