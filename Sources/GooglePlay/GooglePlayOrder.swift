import Foundation
import StrictJSON

/// `orders.get`'s answer: one charge as Google booked it, with Google's field names. The only source of what
/// the customer actually paid (`total`, after discounts, with tax); `recurringPrice` on the subscription is a
/// list price. Buyer address and points details are not read.
///
/// Read with `JSONReader` as `SubscriptionPurchaseV2` is: kept fields checked for their kind, unknown ones skipped.
public struct GooglePlayOrder: Sendable, Hashable, JSONReadable {
    /// Unique per charge: a renewal gets its own.
    public private(set) var orderId: String?
    public private(set) var purchaseToken: String?
    /// `PENDING`, `PROCESSED`, `CANCELED` (before processing), `PENDING_REFUND`, `PARTIALLY_REFUNDED`, `REFUNDED`,
    /// verbatim.
    public private(set) var state: String?
    public private(set) var createTime: Date?
    public private(set) var lastEventTime: Date?
    /// The final amount paid, discounts and taxes included.
    public private(set) var total: GooglePlayMoney?
    public private(set) var tax: GooglePlayMoney?
    public private(set) var developerRevenueInBuyerCurrency: GooglePlayMoney?
    public private(set) var orderDetails: OrderDetails?
    public private(set) var orderHistory: OrderHistory?
    public private(set) var lineItems: [LineItem]?

    /// Reads Google's JSON. Throws `JSONReaderError`, naming the field at fault, when it is not an `Order` object.
    public init(json: Data) throws {
        self = try JSONReader.read(json, Self.init(json:))
    }

    public init(json reader: inout JSONReader) throws {
        try reader.readObject { reader, key in
            switch key {
            case "orderId": orderId = try reader.readString()
            case "purchaseToken": purchaseToken = try reader.readString()
            case "state": state = try reader.readString()
            case "createTime": createTime = try reader.readGoogleTime()
            case "lastEventTime": lastEventTime = try reader.readGoogleTime()
            case "total": total = try reader.readOptional(GooglePlayMoney.init(json:))
            case "tax": tax = try reader.readOptional(GooglePlayMoney.init(json:))
            case "developerRevenueInBuyerCurrency":
                developerRevenueInBuyerCurrency = try reader.readOptional(GooglePlayMoney.init(json:))
            case "orderDetails": orderDetails = try reader.readOptional(OrderDetails.init(json:))
            case "orderHistory": orderHistory = try reader.readOptional(OrderHistory.init(json:))
            case "lineItems": lineItems = try reader.readList(LineItem.self)
            default: try reader.skipValue()
            }
        }
    }

    /// Whether `total` includes tax (it does where Google is merchant of record).
    public struct OrderDetails: Sendable, Hashable, JSONReadable {
        public private(set) var taxInclusive: Bool?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "taxInclusive": taxInclusive = try reader.readBool()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// One charged item; a subscription order has one per subscribed item.
    public struct LineItem: Sendable, Hashable, JSONReadable {
        public private(set) var productId: String?
        public private(set) var productTitle: String?
        public private(set) var total: GooglePlayMoney?
        public private(set) var tax: GooglePlayMoney?
        public private(set) var listingPrice: GooglePlayMoney?
        public private(set) var subscriptionDetails: SubscriptionDetails?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "productId": productId = try reader.readString()
                case "productTitle": productTitle = try reader.readString()
                case "total": total = try reader.readOptional(GooglePlayMoney.init(json:))
                case "tax": tax = try reader.readOptional(GooglePlayMoney.init(json:))
                case "listingPrice": listingPrice = try reader.readOptional(GooglePlayMoney.init(json:))
                case "subscriptionDetails": subscriptionDetails = try reader.readOptional(SubscriptionDetails.init(json:))
                default: try reader.skipValue()
                }
            }
        }
    }

    /// What a subscription item's charge paid for.
    public struct SubscriptionDetails: Sendable, Hashable, JSONReadable {
        public private(set) var basePlanId: String?
        public private(set) var offerId: String?
        /// The period this order paid for, as of processing (Google: for accounting; the current expiry is the
        /// subscription's).
        public private(set) var servicePeriodStartTime: Date?
        public private(set) var servicePeriodEndTime: Date?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "basePlanId": basePlanId = try reader.readString()
                case "offerId": offerId = try reader.readString()
                case "servicePeriodStartTime": servicePeriodStartTime = try reader.readGoogleTime()
                case "servicePeriodEndTime": servicePeriodEndTime = try reader.readGoogleTime()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// What happened to the order after it was placed: processing, cancellation, refunds.
    public struct OrderHistory: Sendable, Hashable, JSONReadable {
        public private(set) var processedEvent: Event?
        public private(set) var cancellationEvent: Event?
        /// Present once the order is fully refunded.
        public private(set) var refundEvent: RefundEvent?
        public private(set) var partialRefundEvents: [PartialRefundEvent]?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "processedEvent": processedEvent = try reader.readOptional(Event.init(json:))
                case "cancellationEvent": cancellationEvent = try reader.readOptional(Event.init(json:))
                case "refundEvent": refundEvent = try reader.readOptional(RefundEvent.init(json:))
                case "partialRefundEvents": partialRefundEvents = try reader.readList(PartialRefundEvent.self)
                default: try reader.skipValue()
                }
            }
        }
    }

    /// A point in the order's history.
    public struct Event: Sendable, Hashable, JSONReadable {
        public private(set) var eventTime: Date?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "eventTime": eventTime = try reader.readGoogleTime()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// The full refund of the order.
    public struct RefundEvent: Sendable, Hashable, JSONReadable {
        public private(set) var eventTime: Date?
        /// `OTHER` or `CHARGEBACK`, verbatim.
        public private(set) var refundReason: String?
        public private(set) var refundDetails: RefundDetails?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "eventTime": eventTime = try reader.readGoogleTime()
                case "refundReason": refundReason = try reader.readString()
                case "refundDetails": refundDetails = try reader.readOptional(RefundDetails.init(json:))
                default: try reader.skipValue()
                }
            }
        }
    }

    /// One partial refund; only processed ones moved money.
    public struct PartialRefundEvent: Sendable, Hashable, JSONReadable {
        public private(set) var createTime: Date?
        public private(set) var processTime: Date?
        /// `PENDING` or `PROCESSED_SUCCESSFULLY`, verbatim.
        public private(set) var state: String?
        public private(set) var refundDetails: RefundDetails?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "createTime": createTime = try reader.readGoogleTime()
                case "processTime": processTime = try reader.readGoogleTime()
                case "state": state = try reader.readString()
                case "refundDetails": refundDetails = try reader.readOptional(RefundDetails.init(json:))
                default: try reader.skipValue()
                }
            }
        }
    }

    /// The amounts refunded, tax included in `total`.
    public struct RefundDetails: Sendable, Hashable, JSONReadable {
        public private(set) var total: GooglePlayMoney?
        public private(set) var tax: GooglePlayMoney?

        public init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "total": total = try reader.readOptional(GooglePlayMoney.init(json:))
                case "tax": tax = try reader.readOptional(GooglePlayMoney.init(json:))
                default: try reader.skipValue()
                }
            }
        }
    }
}
