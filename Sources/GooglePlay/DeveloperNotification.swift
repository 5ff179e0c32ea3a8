import Foundation
import StrictJSON

/// A Google Play Real-time developer notification (the base64-decoded `message.data` of a Pub/Sub push): only a
/// poke that something changed for a purchase token; the state comes from the API. Read leniently — Google's
/// examples send `eventTimeMillis` as a string, its samples as a number — and kinds or notification types this
/// version does not know are kept rather than refused.
public struct DeveloperNotification: Sendable, Equatable {
    /// Longest notification accepted; Google's are a few hundred bytes.
    public static let maxLength = 16 * 1024
    /// Longest purchase token or order id accepted.
    public static let maxTokenLength = 4096

    public let version: String?
    public let packageName: String
    public let eventTimeMillis: Int64
    public let content: Content

    public var eventTime: Date { GoogleTimestamp.date(milliseconds: eventTimeMillis) }

    /// Exactly one of the notification objects, which Google documents as mutually exclusive.
    public enum Content: Sendable, Equatable {
        case subscription(SubscriptionNotification)
        case oneTimeProduct(OneTimeProductNotification)
        case voidedPurchase(VoidedPurchaseNotification)
        case test(TestNotification)
        /// A kind this version does not model (`pendingRefundReviewNotification`…), by its field name.
        case other(String)
    }

    /// Reads the notification JSON. Throws `GoogleNotificationError` (`.tooLarge`, `.invalidNotification`).
    public init(json: Data) throws(GoogleNotificationError) {
        guard json.count <= Self.maxLength else {
            throw GoogleNotificationError(.tooLarge, "the notification is \(json.count) bytes, more than \(Self.maxLength)")
        }
        let fields: NotificationFields
        do {
            fields = try JSONReader.read(json, NotificationFields.init(json:))
        } catch {
            throw GoogleNotificationError(.invalidNotification, "not a DeveloperNotification: \(error)")
        }
        self = try fields.notification()
    }

    fileprivate init(version: String?, packageName: String, eventTimeMillis: Int64, content: Content) {
        self.version = version
        self.packageName = packageName
        self.eventTimeMillis = eventTimeMillis
        self.content = content
    }
}

/// `subscriptionNotification`. The deprecated `subscriptionId` is not read: the product comes from the API's
/// line items.
public struct SubscriptionNotification: Sendable, Equatable {
    public let version: String?
    public let notificationType: SubscriptionNotificationType
    public let purchaseToken: String

    public init(version: String?, notificationType: SubscriptionNotificationType, purchaseToken: String) {
        self.version = version
        self.notificationType = notificationType
        self.purchaseToken = purchaseToken
    }
}

/// `subscriptionNotification.notificationType`, kept as sent; `name` knows Google's documented values.
public struct SubscriptionNotificationType: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let recovered = Self(rawValue: 1)
    public static let renewed = Self(rawValue: 2)
    public static let canceled = Self(rawValue: 3)
    public static let purchased = Self(rawValue: 4)
    public static let onHold = Self(rawValue: 5)
    public static let inGracePeriod = Self(rawValue: 6)
    public static let restarted = Self(rawValue: 7)
    public static let priceChangeConfirmed = Self(rawValue: 8)
    public static let deferred = Self(rawValue: 9)
    public static let paused = Self(rawValue: 10)
    public static let pauseScheduleChanged = Self(rawValue: 11)
    public static let revoked = Self(rawValue: 12)
    public static let expired = Self(rawValue: 13)
    public static let itemsChanged = Self(rawValue: 17)
    public static let cancellationScheduled = Self(rawValue: 18)
    public static let priceChangeUpdated = Self(rawValue: 19)
    public static let pendingPurchaseCanceled = Self(rawValue: 20)
    public static let priceStepUpConsentUpdated = Self(rawValue: 22)

    /// Google's name (`SUBSCRIPTION_RENEWED`), or `nil` for a value it did not document when this was written.
    public var name: String? { Self.names[rawValue] }

    /// The name, or the number for an unknown type: what the timeline records as the event.
    public var description: String { name ?? "SUBSCRIPTION_NOTIFICATION_TYPE_\(rawValue)" }

    private static let names: [Int: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
        5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED",
        8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 9: "SUBSCRIPTION_DEFERRED", 10: "SUBSCRIPTION_PAUSED",
        11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED", 13: "SUBSCRIPTION_EXPIRED",
        17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED", 19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED",
        20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED", 22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
    ]
}

/// `oneTimeProductNotification`: 1 `ONE_TIME_PRODUCT_PURCHASED`, 2 `ONE_TIME_PRODUCT_CANCELED`.
public struct OneTimeProductNotification: Sendable, Equatable {
    public let version: String?
    public let notificationType: Int
    public let purchaseToken: String
    public let sku: String?

    public init(version: String?, notificationType: Int, purchaseToken: String, sku: String?) {
        self.version = version
        self.notificationType = notificationType
        self.purchaseToken = purchaseToken
        self.sku = sku
    }
}

/// `voidedPurchaseNotification`: the order that was refunded, charged back or cancelled.
public struct VoidedPurchaseNotification: Sendable, Equatable {
    public let purchaseToken: String
    /// The voided charge exactly (a renewal has its own order id).
    public let orderId: String
    /// 1 subscription, 2 one-time product.
    public let productType: Int?
    /// 1 full refund, 2 quantity-based partial refund.
    public let refundType: Int?

    public init(purchaseToken: String, orderId: String, productType: Int?, refundType: Int?) {
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.productType = productType
        self.refundType = refundType
    }
}

/// `testNotification`, sent from Play Console to check the setup; it names no purchase.
public struct TestNotification: Sendable, Equatable {
    public let version: String?

    public init(version: String?) { self.version = version }
}

extension VoidedOrder {
    /// The order a voided-purchase notification names, voided at the notification's event time.
    public init(_ notification: VoidedPurchaseNotification, eventTime: Date) {
        self.init(orderID: notification.orderId, voidedAt: eventTime, refundType: notification.refundType)
    }
}

// MARK: - Reading

/// The top-level fields as sent, read in one pass; `notification()` then checks them. A notification object is
/// one whose field name ends in `Notification` and whose value is not `null`.
private struct NotificationFields: JSONReadable {
    var version: String?
    var packageName: String?
    var eventTimeMillis: Int64?
    /// Each notification object present, by field name; kinds this version does not model keep no fields.
    var notifications: [String: ObjectFields] = [:]

    init(json reader: inout JSONReader) throws {
        try reader.readObject { reader, key in
            switch key {
            case "version": version = try reader.readString()
            case "packageName": packageName = try reader.readString()
            case "eventTimeMillis": eventTimeMillis = try reader.readLenientInteger(Int64.self)
            default:
                let name = key.description
                guard name.hasSuffix("Notification") else { return try reader.skipValue() }
                let kind = ObjectFields.Kind(rawValue: name)
                notifications[name] = try reader.readOptional { try ObjectFields(json: &$0, kind: kind) }
            }
        }
    }

    /// The notification, once exactly one notification object is present and every field it needs checks out.
    func notification() throws(GoogleNotificationError) -> DeveloperNotification {
        func invalid(_ reason: String) -> GoogleNotificationError { GoogleNotificationError(.invalidNotification, reason) }
        let present = notifications.keys.sorted()
        guard present.count == 1, let kind = present.first, let object = notifications[kind] else {
            throw invalid(present.isEmpty ? "it carries no notification object"
                          : "it carries \(present.count) notification objects (\(present.joined(separator: ", "))), not one")
        }
        guard let packageName, (1...255).contains(packageName.utf8.count) else {
            throw invalid("packageName is missing, empty or longer than 255 bytes")
        }
        guard let eventTimeMillis, eventTimeMillis >= 0 else { throw invalid("eventTimeMillis is missing or negative") }
        let content: DeveloperNotification.Content
        switch ObjectFields.Kind(rawValue: kind) {
        case .subscription?:
            guard let type = object.notificationType else { throw invalid("\(kind).notificationType is missing") }
            content = .subscription(SubscriptionNotification(
                version: object.version, notificationType: SubscriptionNotificationType(rawValue: type),
                purchaseToken: try Self.token(object.purchaseToken, "purchaseToken", in: kind)))
        case .oneTimeProduct?:
            guard let type = object.notificationType else { throw invalid("\(kind).notificationType is missing") }
            content = .oneTimeProduct(OneTimeProductNotification(
                version: object.version, notificationType: type,
                purchaseToken: try Self.token(object.purchaseToken, "purchaseToken", in: kind), sku: object.sku))
        case .voidedPurchase?:
            content = .voidedPurchase(VoidedPurchaseNotification(
                purchaseToken: try Self.token(object.purchaseToken, "purchaseToken", in: kind),
                orderId: try Self.token(object.orderId, "orderId", in: kind), productType: object.productType,
                refundType: object.refundType))
        case .test?:
            content = .test(TestNotification(version: object.version))
        case nil:
            guard kind.utf8.count <= 64 else { throw invalid("a notification field name is longer than 64 bytes") }
            content = .other(kind)
        }
        return DeveloperNotification(version: version, packageName: packageName, eventTimeMillis: eventTimeMillis,
                                     content: content)
    }

    /// A purchase token or order id: present, not empty, bounded, printable ASCII (it goes into URLs and logs).
    private static func token(_ value: String?, _ name: String, in kind: String) throws(GoogleNotificationError) -> String {
        guard let value, (1...DeveloperNotification.maxTokenLength).contains(value.utf8.count),
              value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw GoogleNotificationError(.invalidNotification, "\(kind).\(name) is missing, empty, longer than "
                                          + "\(DeveloperNotification.maxTokenLength) bytes or not printable ASCII")
        }
        return value
    }
}

/// One notification object's fields as sent: only those its kind has are read (and checked for their kind), the
/// rest skipped, so a field another kind carries does not fail it.
private struct ObjectFields {
    /// The kinds this version models, by their field names.
    enum Kind: String {
        case subscription = "subscriptionNotification", oneTimeProduct = "oneTimeProductNotification"
        case voidedPurchase = "voidedPurchaseNotification", test = "testNotification"
    }

    var version: String?
    var notificationType: Int?
    var purchaseToken: String?
    var sku: String?
    var orderId: String?
    var productType: Int?
    var refundType: Int?

    /// Reads the object of a kind this version models; for another kind (nil), skips the value, whatever it is.
    init(json reader: inout JSONReader, kind: Kind?) throws {
        guard let kind else {
            try reader.skipValue()
            return
        }
        try reader.readObject { reader, key in
            switch key {
            case "version" where kind != .voidedPurchase: version = try reader.readString()
            case "notificationType" where kind == .subscription || kind == .oneTimeProduct:
                notificationType = try reader.readLenientInteger(Int.self)
            case "purchaseToken" where kind != .test: purchaseToken = try reader.readString()
            case "sku" where kind == .oneTimeProduct: sku = try reader.readString()
            case "orderId" where kind == .voidedPurchase: orderId = try reader.readString()
            case "productType" where kind == .voidedPurchase: productType = try reader.readLenientInteger(Int.self)
            case "refundType" where kind == .voidedPurchase: refundType = try reader.readLenientInteger(Int.self)
            default: try reader.skipValue()
            }
        }
    }
}
