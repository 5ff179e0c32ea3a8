import Foundation
import GooglePlay
import Testing

private func decode(_ json: String) throws(GoogleNotificationError) -> DeveloperNotification {
    try DeveloperNotification(json: Data(json.utf8))
}

/// Why `json` is refused, or nil when it is accepted.
private func refusal(_ json: String) -> GoogleNotificationError? {
    do throws(GoogleNotificationError) {
        _ = try decode(json)
        return nil
    } catch {
        return error
    }
}

/// A notification with Google's top-level fields around `body` (one notification object, as JSON).
private func wrapped(_ body: String, eventTime: String = #""1503349566168""#) -> String {
    #"{"version":"1.0","packageName":"com.example.storesync","eventTimeMillis":\#(eventTime),\#(body)}"#
}

/// Guards `DeveloperNotification`: the four documented kinds decode with their fields, `eventTimeMillis` and
/// integer enums in either JSON spelling, unknown notification types and kinds are kept, the deprecated
/// `subscriptionId` is never read, and malformed notifications are refused with the field at fault.
@Suite("Developer notification")
struct DeveloperNotificationTests {
    @Test("eventTimeMillis is read as a string or a number", arguments: [#""1503349566168""#, "1503349566168"])
    func eventTime(value: String) throws {
        let notification = try decode(wrapped(#""testNotification":{"version":"1.0"}"#, eventTime: value))
        #expect(notification.eventTimeMillis == 1_503_349_566_168)
        #expect(notification.eventTime == Date(timeIntervalSince1970: 1_503_349_566.168))
        #expect(notification.version == "1.0")
        #expect(notification.packageName == "com.example.storesync")
        #expect(notification.content == .test(TestNotification(version: "1.0")))
    }

    @Test("each documented kind decodes with its fields", arguments: [
        (#""subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"tok.A-1_b","subscriptionId":"monthly"}"#,
         DeveloperNotification.Content.subscription(SubscriptionNotification(version: "1.0", notificationType: .purchased,
                                                                             purchaseToken: "tok.A-1_b"))),
        (#""subscriptionNotification":{"notificationType":"2","purchaseToken":"tok"}"#,
         .subscription(SubscriptionNotification(version: nil, notificationType: .renewed, purchaseToken: "tok"))),
        (#""oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"tok","sku":"coins"}"#,
         .oneTimeProduct(OneTimeProductNotification(version: "1.0", notificationType: 1, purchaseToken: "tok", sku: "coins"))),
        (#""voidedPurchaseNotification":{"purchaseToken":"tok","orderId":"GS.0000-0000-0000","productType":1,"refundType":1}"#,
         .voidedPurchase(VoidedPurchaseNotification(purchaseToken: "tok", orderId: "GS.0000-0000-0000", productType: 1,
                                                    refundType: 1))),
        (#""voidedPurchaseNotification":{"purchaseToken":"tok","orderId":"GPA.1..0","productType":"1","refundType":"2"}"#,
         .voidedPurchase(VoidedPurchaseNotification(purchaseToken: "tok", orderId: "GPA.1..0", productType: 1, refundType: 2))),
        (#""testNotification":{"version":"1.0"}"#, .test(TestNotification(version: "1.0"))),
        (#""pendingRefundReviewNotification":{"orderId":"GPA.1","refundReason":7},"futureField":1"#,
         .other("pendingRefundReviewNotification")),
        (#""subscriptionNotification":null,"testNotification":{}"#, .test(TestNotification(version: nil))),
    ])
    func kinds(body: String, content: DeveloperNotification.Content) throws {
        #expect(try decode(wrapped(body)).content == content)
    }

    @Test("notification types keep their number; Google's documented ones have names", arguments: [
        (1, "SUBSCRIPTION_RECOVERED"), (4, "SUBSCRIPTION_PURCHASED"), (13, "SUBSCRIPTION_EXPIRED"),
        (17, "SUBSCRIPTION_ITEMS_CHANGED"), (19, "SUBSCRIPTION_PRICE_CHANGE_UPDATED"),
        (20, "SUBSCRIPTION_PENDING_PURCHASE_CANCELED"), (22, "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED"),
        (14, nil), (21, nil), (23, nil), (0, nil),
    ] as [(Int, String?)])
    func notificationTypes(type: Int, name: String?) throws {
        let notification = try decode(wrapped(#""subscriptionNotification":{"notificationType":\#(type),"purchaseToken":"t"}"#))
        guard case .subscription(let subscription) = notification.content else {
            Issue.record("not a subscription notification")
            return
        }
        #expect(subscription.notificationType.rawValue == type)
        #expect(subscription.notificationType.name == name)
        #expect(subscription.notificationType.description == name ?? "SUBSCRIPTION_NOTIFICATION_TYPE_\(type)")
    }

    @Test("malformed notifications are refused with the field at fault", arguments: [
        ("not JSON", "eyJ2ZXJzaW9uIjoi", "not a DeveloperNotification: malformed JSON at byte 0"),
        ("a JSON array", "[]", "not a DeveloperNotification: expected an object, found an array"),
        ("no notification object", wrapped(#""other":{}"#), "no notification object"),
        ("only a null notification", wrapped(#""testNotification":null"#), "no notification object"),
        ("two notification objects", wrapped(#""testNotification":{},"subscriptionNotification":{"notificationType":1,"purchaseToken":"t"}"#),
         "2 notification objects"),
        ("no package name", #"{"eventTimeMillis":"1","testNotification":{}}"#, "packageName"),
        ("an empty package name", #"{"packageName":"","eventTimeMillis":"1","testNotification":{}}"#, "packageName"),
        ("no event time", #"{"packageName":"p","testNotification":{}}"#, "eventTimeMillis"),
        ("a negative event time", wrapped(#""testNotification":{}"#, eventTime: "-5"), "eventTimeMillis"),
        ("an event time that is not a number", wrapped(#""testNotification":{}"#, eventTime: #""soon""#),
         #"bad eventTimeMillis: expected an integer (Int64) as a decimal string of at most 24 bytes, found "soon""#),
        ("a fractional event time", wrapped(#""testNotification":{}"#, eventTime: "1503349566168.5"),
         "bad eventTimeMillis: expected an integer, found 1503349566168.5"),
        ("a fractional event time as a string", wrapped(#""testNotification":{}"#, eventTime: #""1503349566168.5""#),
         "bad eventTimeMillis: expected an integer (Int64) as a decimal string"),
        ("an event time string over 24 bytes", wrapped(#""testNotification":{}"#, eventTime: #""0000000000001503349566168""#),
         "bad eventTimeMillis: expected an integer (Int64) as a decimal string of at most 24 bytes"),
        ("an event time that is a boolean", wrapped(#""testNotification":{}"#, eventTime: "true"),
         "bad eventTimeMillis: expected an integer or a decimal string, found a boolean"),
        ("a null event time", wrapped(#""testNotification":{}"#, eventTime: "null"), "eventTimeMillis is missing"),
        ("no notification type", wrapped(#""subscriptionNotification":{"purchaseToken":"t"}"#), "notificationType"),
        ("a notification type that is not a number", wrapped(#""subscriptionNotification":{"notificationType":"four","purchaseToken":"t"}"#),
         #"bad subscriptionNotification.notificationType: expected an integer (Int) as a decimal string of at most 24 bytes, found "four""#),
        ("a fractional refund type", wrapped(#""voidedPurchaseNotification":{"purchaseToken":"t","orderId":"o","refundType":1.5}"#),
         "bad voidedPurchaseNotification.refundType: expected an integer, found 1.5"),
        ("a package name that is not a string", #"{"packageName":1,"eventTimeMillis":"1","testNotification":{}}"#,
         "bad packageName: expected a string, found a number"),
        ("a version that is not a string", wrapped(#""testNotification":{"version":1.0}"#),
         "bad testNotification.version: expected a string, found a number"),
        ("no purchase token", wrapped(#""subscriptionNotification":{"notificationType":4}"#), "purchaseToken"),
        ("an empty purchase token", wrapped(#""subscriptionNotification":{"notificationType":4,"purchaseToken":""}"#), "purchaseToken"),
        ("a purchase token with a newline", wrapped(#""subscriptionNotification":{"notificationType":4,"purchaseToken":"a\nb"}"#),
         "purchaseToken"),
        ("a purchase token that is not a string", wrapped(#""subscriptionNotification":{"notificationType":4,"purchaseToken":7}"#),
         "bad subscriptionNotification.purchaseToken: expected a string, found a number"),
        ("a voided purchase without its order", wrapped(#""voidedPurchaseNotification":{"purchaseToken":"t","productType":1}"#),
         "orderId"),
        ("a notification that is not an object", wrapped(#""subscriptionNotification":"4""#),
         "bad subscriptionNotification: expected an object, found a string"),
        ("a notification repeated, the last one null", wrapped(#""testNotification":{},"testNotification":null"#),
         "no notification object"),
        ("a notification of an unknown kind beside a known one", wrapped(#""testNotification":{},"futureNotification":1"#),
         "2 notification objects (futureNotification, testNotification)"),
        ("an oversized purchase token", wrapped(#""subscriptionNotification":{"notificationType":4,"purchaseToken":"\#(String(repeating: "a", count: 4097))"}"#),
         "purchaseToken"),
    ])
    func malformed(name: String, json: String, fragment: String) {
        let error = refusal(json)
        #expect(error?.code == .invalidNotification)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "accepted")")
    }

    @Test("unknown fields and fields of another kind are skipped unread; a repeated field takes its last value", arguments: [
        (wrapped(#""testNotification":{"purchaseToken":7,"notificationType":"x","extra":{"a":[1,{}]}},"extra":null"#),
         DeveloperNotification.Content.test(TestNotification(version: nil))),
        (wrapped(#""subscriptionNotification":{"notificationType":4,"purchaseToken":"t","sku":5,"orderId":[],"subscriptionId":{}}"#),
         .subscription(SubscriptionNotification(version: nil, notificationType: .purchased, purchaseToken: "t"))),
        (wrapped(#""voidedPurchaseNotification":{"purchaseToken":"t","orderId":"o","version":2,"notificationType":true}"#),
         .voidedPurchase(VoidedPurchaseNotification(purchaseToken: "t", orderId: "o", productType: nil, refundType: nil))),
        (wrapped(#""subscriptionNotification":{"notificationType":4,"notificationType":"13","purchaseToken":"a","purchaseToken":"b"}"#),
         .subscription(SubscriptionNotification(version: nil, notificationType: .expired, purchaseToken: "b"))),
        (wrapped(#""testNotification":null,"testNotification":{"version":"2"}"#), .test(TestNotification(version: "2"))),
        (wrapped(#""futureNotification":"anything""#), .other("futureNotification")),
    ])
    func skippedAndRepeated(json: String, content: DeveloperNotification.Content) throws {
        #expect(try decode(json).content == content)
    }

    @Test("a repeated top-level field takes its last value")
    func repeatedTopLevel() throws {
        let notification = try decode(#"{"packageName":"a","eventTimeMillis":"1","packageName":"b","eventTimeMillis":2,"testNotification":{}}"#)
        #expect(notification.packageName == "b")
        #expect(notification.eventTimeMillis == 2)
    }

    @Test("a notification over 16 KiB is refused before parsing")
    func tooLarge() {
        let padding = String(repeating: " ", count: DeveloperNotification.maxLength)
        #expect(refusal(wrapped(#""testNotification":{}"#) + padding)?.code == .tooLarge)
        #expect(refusal(wrapped(#""testNotification":{}"#) + String(padding.dropFirst(200))) == nil)
    }

    @Test("a voided purchase names the order to refund, voided at the notification's time")
    func voidedOrder() throws {
        let notification = try decode(wrapped(#""voidedPurchaseNotification":{"purchaseToken":"t","orderId":"GPA.1..3","productType":1,"refundType":2}"#))
        guard case .voidedPurchase(let voided) = notification.content else {
            Issue.record("not a voided purchase notification")
            return
        }
        let order = VoidedOrder(voided, eventTime: notification.eventTime)
        #expect(order.orderID == "GPA.1..3")
        #expect(order.voidedAt == Date(timeIntervalSince1970: 1_503_349_566.168))
        #expect(order.refundType == 2)
        #expect(order.isPartial)
    }
}
