import Foundation
import StrictJSON

/// One record of `purchases.voidedpurchases.list`: an order that was refunded with revocation, charged back or
/// cancelled. Google's example sends the int32 fields as strings; both spellings are read.
public struct VoidedPurchase: Sendable, Hashable, JSONReadable {
    public private(set) var kind: String?
    public private(set) var purchaseToken: String?
    /// Identifies the voided charge exactly (a renewal has its own order id).
    public private(set) var orderId: String?
    public private(set) var purchaseTimeMillis: Int64?
    public private(set) var voidedTimeMillis: Int64?
    /// 0 user, 1 developer, 2 Google.
    public private(set) var voidedSource: Int?
    /// 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental purchase, 5 fraud, 6 friendly fraud,
    /// 7 chargeback, 8 unacknowledged purchase.
    public private(set) var voidedReason: Int?
    /// Set only for a quantity-based partial refund.
    public private(set) var voidedQuantity: Int?

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

    public init(json reader: inout JSONReader) throws {
        try reader.readObject { reader, key in
            switch key {
            case "kind": kind = try reader.readString()
            case "purchaseToken": purchaseToken = try reader.readString()
            case "orderId": orderId = try reader.readString()
            case "purchaseTimeMillis": purchaseTimeMillis = try reader.readLenientInteger(Int64.self)
            case "voidedTimeMillis": voidedTimeMillis = try reader.readLenientInteger(Int64.self)
            case "voidedSource": voidedSource = try reader.readLenientInteger(Int.self)
            case "voidedReason": voidedReason = try reader.readLenientInteger(Int.self)
            case "voidedQuantity": voidedQuantity = try reader.readLenientInteger(Int.self)
            default: try reader.skipValue()
            }
        }
    }

    /// Google's name for a `voidedReason`, or the number when it is not one Google documents.
    public static func reasonName(_ reason: Int) -> String {
        let names = ["OTHER", "REMORSE", "NOT_RECEIVED", "DEFECTIVE", "ACCIDENTAL_PURCHASE", "FRAUD", "FRIENDLY_FRAUD",
                     "CHARGEBACK", "UNACKNOWLEDGED_PURCHASE"]
        return names.indices.contains(reason) ? names[reason] : String(reason)
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
