import Foundation
import Ingest
import Testing

/// The ingestion endpoints' cheap checks: what a store sends is accepted, anything that can never be
/// processed is refused with a reason.
@Suite struct WebhookBodyTests {
    @Test(arguments: [
        (WebhookSource.apple, #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.eyJ9.c2ln"}"#),
        (.googlePlay, #"{"message":{"data":"e30=","messageId":"1","publishTime":"2026-11-29T14:00:00Z"},"subscription":"projects/p/subscriptions/s"}"#),
        (.googlePlay, #"{"message":{"data":"e30=","message_id":"1"},"subscription":"s"}"#),
    ])
    func acceptsWhatStoresSend(source: WebhookSource, body: String) {
        #expect(WebhookBody.check(Data(body.utf8), from: source) == nil)
    }

    @Test(arguments: [
        (WebhookSource.apple, "", "body is not a JSON object"),
        (.apple, "[1]", "body is not a JSON object"),
        (.apple, #"{"signedPayload":1}"#, "body has no signedPayload string"),
        (.apple, #"{"signedPayload":""}"#, "body has no signedPayload string"),
        (.apple, #"{"signedPayload":"a.b"}"#, "signedPayload is not a compact JWS"),
        (.apple, #"{"signedPayload":"a.b.c"} {}"#, "body is not a JSON object"),
        (.apple, #"{"signedPayload":null}"#, "body has no signedPayload string"),
        (.googlePlay, "[1]", "the push body is not a Pub/Sub envelope"),
        (.googlePlay, #"{"subscription":"s"}"#, "the push body has no message object"),
        (.googlePlay, #"{"message":{"messageId":"1"},"subscription":"s"}"#, "message.data is missing or empty"),
        (.googlePlay, #"{"message":{"data":"","messageId":"1"},"subscription":"s"}"#, "message.data is missing or empty"),
        (.googlePlay, #"{"message":{"data":"e30="},"subscription":"s"}"#, "message.messageId is missing or empty"),
        (.googlePlay, #"{"message":{"data":"e30=","messageId":""},"subscription":"s"}"#, "message.messageId is missing or empty"),
        (.googlePlay, #"{"message":{"data":"e30=","messageId":"1"}}"#, "body has no subscription string"),
        (.googlePlay, #"{"message":{"data":"e30=","messageId":"\#(String(repeating: "1", count: 201))"},"subscription":"s"}"#,
         "message.messageId is 201 bytes"),
        (.googlePlay, #"{"message":{"data":"e30=","messageId":"1 2"},"subscription":"s"}"#,
         "message.messageId is not printable ASCII"),
        (.googlePlay, #"{"message":{"data":"e30=","messageId":"1"},"subscription":"projects/p/subscriptions/a\u0007"}"#,
         "subscription is not printable ASCII"),
        (.googlePlay, #"{"message":{"data":"e30=","messageId":"1"},"subscription":"\#(String(repeating: "s", count: 401))"}"#,
         "subscription is 401 bytes"),
        (.googlePlay, #"{"message":{"data":"not base64!","messageId":"1"},"subscription":"s"}"#, "message.data"),
        (.googlePlay, #"{"message":{"data":"e30=","messageId":"1","message_id":"2"},"subscription":"s"}"#, "message"),
    ])
    func refusesWhatCanNeverBeProcessed(source: WebhookSource, body: String, reason: String) {
        let refused = WebhookBody.check(Data(body.utf8), from: source)?.reason
        #expect(refused?.hasPrefix(reason) == true, "\(refused ?? "accepted")")
    }
}
