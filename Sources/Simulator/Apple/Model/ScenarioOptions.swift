/// How `expire` ends a subscription; each maps to an `EXPIRED` subtype and an `expirationIntent`.
public enum ExpirationReason: String, Sendable, Codable {
    /// The customer turned auto-renew off and the period ran out.
    case voluntary = "VOLUNTARY"
    /// Billing retry ended without recovering.
    case billingRetry = "BILLING_RETRY"
    /// The customer did not consent to a price increase.
    case priceIncrease = "PRICE_INCREASE"
    /// The product was not for sale at renewal time.
    case productNotForSale = "PRODUCT_NOT_FOR_SALE"
    /// Any other reason: `EXPIRED` without a subtype.
    case other = "OTHER"

    var subtype: String? { self == .other ? nil : rawValue }

    var expirationIntent: Int {
        switch self {
        case .voluntary: 1
        case .billingRetry: 2
        case .priceIncrease: 3
        case .productNotForSale: 4
        case .other: 5
        }
    }
}

/// Why the customer asked for a refund (`consumptionRequestReason` of a `CONSUMPTION_REQUEST`).
public enum ConsumptionRequestReason: String, Sendable, Codable {
    case unintendedPurchase = "UNINTENDED_PURCHASE"
    case fulfillmentIssue = "FULFILLMENT_ISSUE"
    case unsatisfiedWithPurchase = "UNSATISFIED_WITH_PURCHASE"
    case legal = "LEGAL"
    case other = "OTHER"
}
