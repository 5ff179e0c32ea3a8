import Foundation

/// One record of `purchases.voidedpurchases.list`: an order that was refunded with revocation, charged back or
/// cancelled. Google's example sends the int32 fields as strings; both spellings are read.
public struct VoidedPurchase: Sendable, Hashable, Decodable {
    public let kind: String?
    public let purchaseToken: String?
    /// Identifies the voided charge exactly (a renewal has its own order id).
    public let orderId: String?
    public let purchaseTimeMillis: Int64?
    public let voidedTimeMillis: Int64?
    /// 0 user, 1 developer, 2 Google.
    public let voidedSource: Int?
    /// 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental purchase, 5 fraud, 6 friendly fraud,
    /// 7 chargeback, 8 unacknowledged purchase.
    public let voidedReason: Int?
    /// Set only for a quantity-based partial refund.
    public let voidedQuantity: Int?

    public init(kind: String? = nil, purchaseToken: String?, orderId: String?, purchaseTimeMillis: Int64? = nil,
                voidedTimeMillis: Int64?, voidedSource: Int? = nil, voidedReason: Int? = nil, voidedQuantity: Int? = nil) {
        self.kind = kind
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.purchaseTimeMillis = purchaseTimeMillis
        self.voidedTimeMillis = voidedTimeMillis
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
        self.voidedQuantity = voidedQuantity
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decodeIfPresent(String.self, forKey: .kind)
        purchaseToken = try container.decodeIfPresent(String.self, forKey: .purchaseToken)
        orderId = try container.decodeIfPresent(String.self, forKey: .orderId)
        purchaseTimeMillis = try container.decodeLenientIfPresent(Int64.self, forKey: .purchaseTimeMillis)
        voidedTimeMillis = try container.decodeLenientIfPresent(Int64.self, forKey: .voidedTimeMillis)
        voidedSource = try container.decodeLenientIfPresent(Int.self, forKey: .voidedSource)
        voidedReason = try container.decodeLenientIfPresent(Int.self, forKey: .voidedReason)
        voidedQuantity = try container.decodeLenientIfPresent(Int.self, forKey: .voidedQuantity)
    }

    /// Google's name for a `voidedReason`, or the number when it is not one Google documents.
    public static func reasonName(_ reason: Int) -> String {
        let names = ["OTHER", "REMORSE", "NOT_RECEIVED", "DEFECTIVE", "ACCIDENTAL_PURCHASE", "FRAUD", "FRIENDLY_FRAUD",
                     "CHARGEBACK", "UNACKNOWLEDGED_PURCHASE"]
        return names.indices.contains(reason) ? names[reason] : String(reason)
    }

    private enum CodingKeys: String, CodingKey {
        case kind, purchaseToken, orderId, purchaseTimeMillis, voidedTimeMillis, voidedSource, voidedReason, voidedQuantity
    }
}

/// One page of voided purchases, oldest first.
public struct VoidedPurchasesPage: Sendable {
    public let voidedPurchases: [VoidedPurchase]
    /// Pass back as `token` for the next page; `nil` on the last page.
    public let nextPageToken: String?

    public init(voidedPurchases: [VoidedPurchase], nextPageToken: String?) {
        self.voidedPurchases = voidedPurchases
        self.nextPageToken = nextPageToken
    }
}

/// An order Google reports voided, from whichever source said so (a `voidedPurchaseNotification` or the voided
/// purchases list): what the snapshot translator needs to refund the order's charge.
public struct VoidedOrder: Sendable, Hashable {
    public let orderID: String
    public let voidedAt: Date
    /// The notification's `refundType`: 1 full, 2 quantity-based partial; `nil` when the source does not say.
    public let refundType: Int?
    /// The list's `voidedQuantity`, set only for quantity-based partial refunds.
    public let voidedQuantity: Int?
    /// Google's reason, by name when it documents one.
    public let reason: String?

    public init(orderID: String, voidedAt: Date, refundType: Int? = nil, voidedQuantity: Int? = nil, reason: String? = nil) {
        self.orderID = orderID
        self.voidedAt = voidedAt
        self.refundType = refundType
        self.voidedQuantity = voidedQuantity
        self.reason = reason
    }

    /// From a voided purchases list record; `nil` when it lacks the order id. Google lists a record once it has
    /// seen the order voided, so one without `voidedTimeMillis` was voided by `listedBy` — the end of the window
    /// it was listed in — which dates its refund rather than leaving it undated.
    public init?(_ purchase: VoidedPurchase, listedBy: Date) {
        guard let orderID = purchase.orderId, !orderID.isEmpty else { return nil }
        self.init(orderID: orderID, voidedAt: purchase.voidedTimeMillis.map(GoogleTimestamp.date(milliseconds:)) ?? listedBy,
                  voidedQuantity: purchase.voidedQuantity, reason: purchase.voidedReason.map(VoidedPurchase.reasonName))
    }

    /// Only part of the order was refunded, so its amount must come from the order's own refund events.
    public var isPartial: Bool { refundType == 2 || voidedQuantity != nil }
}
