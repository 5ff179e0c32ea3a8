import Foundation

/// `orders.get`'s answer: one charge as Google booked it, with Google's field names. The only source of what
/// the customer actually paid (`total`, after discounts, with tax); `recurringPrice` on the subscription is a
/// list price. Buyer address and points details are not read.
public struct GooglePlayOrder: Sendable, Hashable, Decodable {
    /// Unique per charge: a renewal gets its own.
    public let orderId: String?
    public let purchaseToken: String?
    /// `PENDING`, `PROCESSED`, `CANCELED` (before processing), `PENDING_REFUND`, `PARTIALLY_REFUNDED`, `REFUNDED`,
    /// verbatim.
    public let state: String?
    public let createTime: Date?
    public let lastEventTime: Date?
    /// The final amount paid, discounts and taxes included.
    public let total: GooglePlayMoney?
    public let tax: GooglePlayMoney?
    public let developerRevenueInBuyerCurrency: GooglePlayMoney?
    public let orderDetails: OrderDetails?
    public let orderHistory: OrderHistory?
    public let lineItems: [LineItem]?

    /// Decodes Google's JSON. Throws `DecodingError` when it is not an `Order` object.
    public init(json: Data) throws {
        self = try GoogleJSON.decoder().decode(Self.self, from: json)
    }

    /// Whether `total` includes tax (it does where Google is merchant of record).
    public struct OrderDetails: Sendable, Hashable, Decodable {
        public let taxInclusive: Bool?
    }

    /// One charged item; a subscription order has one per subscribed item.
    public struct LineItem: Sendable, Hashable, Decodable {
        public let productId: String?
        public let productTitle: String?
        public let total: GooglePlayMoney?
        public let tax: GooglePlayMoney?
        public let listingPrice: GooglePlayMoney?
        public let subscriptionDetails: SubscriptionDetails?
    }

    /// What a subscription item's charge paid for.
    public struct SubscriptionDetails: Sendable, Hashable, Decodable {
        public let basePlanId: String?
        public let offerId: String?
        /// The period this order paid for, as of processing (Google: for accounting; the current expiry is the
        /// subscription's).
        public let servicePeriodStartTime: Date?
        public let servicePeriodEndTime: Date?
    }

    /// What happened to the order after it was placed: processing, cancellation, refunds.
    public struct OrderHistory: Sendable, Hashable, Decodable {
        public let processedEvent: Event?
        public let cancellationEvent: Event?
        /// Present once the order is fully refunded.
        public let refundEvent: RefundEvent?
        public let partialRefundEvents: [PartialRefundEvent]?
    }

    /// A point in the order's history.
    public struct Event: Sendable, Hashable, Decodable {
        public let eventTime: Date?
    }

    /// The full refund of the order.
    public struct RefundEvent: Sendable, Hashable, Decodable {
        public let eventTime: Date?
        /// `OTHER` or `CHARGEBACK`, verbatim.
        public let refundReason: String?
        public let refundDetails: RefundDetails?
    }

    /// One partial refund; only processed ones moved money.
    public struct PartialRefundEvent: Sendable, Hashable, Decodable {
        public let createTime: Date?
        public let processTime: Date?
        /// `PENDING` or `PROCESSED_SUCCESSFULLY`, verbatim.
        public let state: String?
        public let refundDetails: RefundDetails?
    }

    /// The amounts refunded, tax included in `total`.
    public struct RefundDetails: Sendable, Hashable, Decodable {
        public let total: GooglePlayMoney?
        public let tax: GooglePlayMoney?
    }
}
