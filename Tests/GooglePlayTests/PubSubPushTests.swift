import Foundation
import GooglePlay
import Testing

/// A push body from envelope fields, `data` already base64 or absent.
private func push(_ message: [String: String], subscription: String? = "projects/storesync-prod/subscriptions/play-rtdn") -> Data {
    var body: [String: Any] = ["message": message]
    body["subscription"] = subscription
    return try! JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
}

private let notification = #"{"version":"1.0","packageName":"com.example.storesync","eventTimeMillis":"1503349566168","subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"PURCHASE_TOKEN","subscriptionId":"monthly"}}"#
private let data = Data(notification.utf8).base64EncodedString()

/// The error `body` throws, which must be a `GoogleNotificationError`.
private func failure(_ body: () throws -> Void) -> GoogleNotificationError? {
    do {
        try body()
    } catch let error as GoogleNotificationError {
        return error
    } catch {
        return nil
    }
    return nil
}

/// Guards `PubSubPush`: the Pub/Sub push envelope is read leniently — either spelling of `messageId` and
/// `publishTime`, unknown fields ignored, base64 with or without padding — and refused with a precise reason when
/// it is oversized, contradictory or not an envelope at all.
@Suite("Pub/Sub push envelope")
struct PubSubPushTests {
    @Test("either spelling of messageId and publishTime is read, and both may be present when they agree", arguments: [
        ["messageId": "136969346945", "publishTime": "2019-11-14T03:58:43.608Z"],
        ["message_id": "136969346945", "publish_time": "2019-11-14T03:58:43.608Z"],
        ["messageId": "136969346945", "message_id": "136969346945", "publishTime": "2019-11-14T03:58:43.608Z",
         "publish_time": "2019-11-14T03:58:43.608Z"],
        ["messageId": "136969346945", "publish_time": "2019-11-14T03:58:43.608000000Z"],
    ])
    func spellings(fields: [String: String]) throws {
        let envelope = try PubSubPush(body: push(fields.merging(["data": data]) { $1 }))
        #expect(envelope.messageID == "136969346945")
        #expect(envelope.publishTime == Date(timeIntervalSince1970: 1_573_703_923.608))
        #expect(envelope.subscription == "projects/storesync-prod/subscriptions/play-rtdn")
        #expect(envelope.data == Data(notification.utf8))
    }

    @Test("the envelope's notification decodes, attributes and unknown fields are ignored, padding is optional")
    func developerNotification() throws {
        let unpadded = Data("{\"version\":\"1.0\",\"packageName\":\"p\",\"eventTimeMillis\":1,\"testNotification\":{}}".utf8)
            .base64EncodedString().trimmingCharacters(in: ["="])
        let body = try JSONSerialization.data(withJSONObject: [
            "message": ["attributes": ["key": "value"], "data": unpadded, "messageId": "1", "deliveryAttempt": 3,
                        "orderingKey": ""] as [String: Any],
            "subscription": "projects/p/subscriptions/s", "futureField": true,
        ] as [String: Any])
        let envelope = try PubSubPush(body: body)
        #expect(envelope.publishTime == nil)
        #expect(try envelope.developerNotification().content == .test(TestNotification(version: nil)))

        let full = try PubSubPush(body: push(["messageId": "2", "data": data], subscription: nil))
        #expect(full.subscription == nil)
        let decoded = try full.developerNotification()
        #expect(decoded.packageName == "com.example.storesync")
        #expect(decoded.content == .subscription(SubscriptionNotification(version: "1.0", notificationType: .purchased,
                                                                          purchaseToken: "PURCHASE_TOKEN")))
    }

    @Test("malformed envelopes are refused with the reason", arguments: [
        ("not JSON", Data("message=1".utf8), GoogleNotificationError.Code.invalidEnvelope,
         "not a Pub/Sub envelope: malformed JSON at byte 0"),
        ("a JSON array", Data("[]".utf8), .invalidEnvelope, "not a Pub/Sub envelope: expected an object, found an array"),
        ("no message", Data(#"{"subscription":"s"}"#.utf8), .invalidEnvelope, "no message"),
        ("a null message", Data(#"{"message":null}"#.utf8), .invalidEnvelope, "no message"),
        ("a message that is not an object", Data(#"{"message":"m"}"#.utf8), .invalidEnvelope,
         "bad message: expected an object, found a string"),
        ("a numeric message id", Data(#"{"message":{"messageId":1}}"#.utf8), .invalidEnvelope,
         "bad message.messageId: expected a string, found a number"),
        ("a snake_case publish time that is not a string", Data(#"{"message":{"messageId":"1","publish_time":0}}"#.utf8),
         .invalidEnvelope, "bad message.publish_time: expected a string, found a number"),
        ("a subscription that is not a string", Data(#"{"message":{"messageId":"1"},"subscription":[]}"#.utf8),
         .invalidEnvelope, "bad subscription: expected a string, found an array"),
        ("trailing data after the envelope", Data(#"{"message":{"messageId":"1"}} {}"#.utf8), .invalidEnvelope,
         "unexpected data after the JSON value"),
        ("no message id", push(["data": data]), .invalidEnvelope, "messageId"),
        ("an empty message id", push(["messageId": "", "data": data]), .invalidEnvelope, "messageId"),
        ("a message id with a space", push(["messageId": "1 2", "data": data]), .invalidEnvelope, "messageId"),
        ("a message id longer than its receipt can keep", push(["messageId": String(repeating: "1", count: 201), "data": data]),
         .invalidEnvelope, "messageId is 201 bytes, longer than the 200"),
        ("contradictory message ids", push(["messageId": "1", "message_id": "2", "data": data]), .invalidEnvelope, "disagree"),
        ("a subscription longer than a subscription name",
         push(["messageId": "1", "data": data], subscription: "projects/p/subscriptions/" + String(repeating: "s", count: 376)),
         .invalidEnvelope, "subscription is 401 bytes, longer than the 400"),
        ("a subscription with a control character", push(["messageId": "1", "data": data],
                                                         subscription: "projects/p/subscriptions/play\u{1B}[2J"),
         .invalidEnvelope, "subscription is not printable ASCII"),
        ("a subscription with a space", push(["messageId": "1", "data": data], subscription: "projects/p/subscriptions/a b"),
         .invalidEnvelope, "subscription is not printable ASCII without spaces"),
        ("a subscription that is not ASCII", push(["messageId": "1", "data": data], subscription: "projects/p/subscriptions/é"),
         .invalidEnvelope, "subscription is not printable ASCII"),
        ("contradictory publish times", push(["messageId": "1", "publishTime": "2019-11-14T03:58:43Z",
                                              "publish_time": "2019-11-14T03:58:44Z", "data": data]), .invalidEnvelope, "disagree"),
        ("a publish time that is not RFC 3339", push(["messageId": "1", "publishTime": "yesterday", "data": data]),
         .invalidEnvelope, "publishTime"),
        ("data that is not base64", push(["messageId": "1", "data": "not base64!"]), .invalidData, "base64"),
        ("data in the URL-safe alphabet", push(["messageId": "1", "data": "eyJh-_"]), .invalidData, "base64"),
        ("a body over 64 KiB", push(["messageId": "1", "data": String(repeating: "A", count: 70_000)]), .tooLarge, "65536"),
        ("data longer than a notification", push(["messageId": "1", "data": String(repeating: "A", count: 30_000)]),
         .tooLarge, "base64 characters"),
    ] as [(String, Data, GoogleNotificationError.Code, String)])
    func malformed(name: String, body: Data, code: GoogleNotificationError.Code, fragment: String) {
        let error = failure { _ = try PubSubPush(body: body) }
        #expect(error?.code == code)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "no error")")
    }

    @Test("a repeated field takes its last value, unknown ones of any kind are skipped")
    func repeatedAndUnknown() throws {
        let body = #"{"message":{"messageId":"1","messageId":"2","attributes":{"a":[null,1.5e3]},"data":null},"x":[{}]}"#
        let envelope = try PubSubPush(body: Data(body.utf8))
        #expect(envelope.messageID == "2")
        #expect(envelope.data.isEmpty)
        #expect(envelope.subscription == nil)
    }

    @Test("a message id as long as a receipt keeps is read")
    func longestMessageID() throws {
        let id = String(repeating: "1", count: PubSubPush.maxMessageIDLength)
        #expect(PubSubPush.maxMessageIDLength == 200, "notification_receipts.message_id holds 200 characters")
        #expect(try PubSubPush(body: push(["messageId": id, "data": data])).messageID == id)
    }

    @Test("the longest subscription name Pub/Sub forms is read, and one that is longer still up to the bound")
    func longestSubscription() throws {
        let longest = "projects/" + String(repeating: "p", count: 30) + "/subscriptions/" + String(repeating: "s", count: 255)
        let domainScoped = "projects/example.com:p/subscriptions/"
        let atBound = domainScoped + String(repeating: "s", count: PubSubPush.maxSubscriptionLength - domainScoped.utf8.count)
        #expect(longest.utf8.count == 309 && atBound.utf8.count == PubSubPush.maxSubscriptionLength)
        for subscription in [longest, atBound] {
            #expect(try PubSubPush(body: push(["messageId": "1", "data": data], subscription: subscription)).subscription
                    == subscription)
        }
    }

    @Test("a message without data is an envelope, but carries no notification")
    func noData() throws {
        for body in [push(["messageId": "1"]), push(["messageId": "1", "data": ""])] {
            let envelope = try PubSubPush(body: body)
            #expect(envelope.data.isEmpty)
            #expect(failure { _ = try envelope.developerNotification() }?.code == .invalidData)
        }
    }
}
