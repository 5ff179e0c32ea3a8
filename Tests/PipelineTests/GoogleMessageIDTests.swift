import Crypto
import Foundation
import HTTP
import Simulator
import Testing

/// A push's `messageId` is its receipt's key, which the database keeps up to 200 characters. An id that fits
/// is mirrored and deduplicated as usual; a longer one (no Pub/Sub id is that long) is refused at ingest (400) with
/// the reason — as the worker would refuse it — instead of failing its receipt's commit on every attempt until the
/// retries run out.
@Suite struct GoogleMessageIDTests {
    /// Posts a push about `purchaseToken` with `messageID` to the ingest `copies` times, authenticated as Pub/Sub
    /// would (with a key the simulated Google publishes from now on), and returns the HTTP statuses.
    private func post(_ pipeline: Pipeline, messageID: String, purchaseToken: String, copies: Int = 1) async throws -> [Int] {
        let play = try #require(pipeline.play)
        let signingKey = try PrivateKey.generate(.rsa(bits: 2048))
        let kid = try play.rotatePushKey(to: signingKey)
        let now = Int(Date().timeIntervalSince1970)
        let notification: [String: Any] = [
            "version": "1.0", "packageName": Pipeline.packageName, "eventTimeMillis": String(now * 1000),
            "subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": purchaseToken],
        ]
        let envelope: [String: Any] = [
            "message": ["data": try JSONSerialization.data(withJSONObject: notification).base64EncodedString(),
                        "messageId": messageID] as [String: Any],
            "subscription": "projects/storesync-simulator/subscriptions/play-rtdn",
        ]
        let claims: [String: Any] = [
            "iss": "https://accounts.google.com", "aud": Pipeline.pushAudience, "email": Pipeline.pushAccount,
            "email_verified": true, "sub": "104857600000000000001", "iat": now, "exp": now + 3600,
        ]
        let token = try CompactJWS.sign(payload: try JSONSerialization.data(withJSONObject: claims), algorithm: .rs256,
                                        key: signingKey, kid: kid, typ: "JWT")
        let url = try #require(pipeline.ingestURL).replacingOccurrences(of: "/webhook/apple", with: "/webhook/google-play")
        let request = HTTPClientRequest(method: "POST", url: url,
                                        headers: [("Host", Pipeline.host), ("Content-Type", "application/json"),
                                                  ("Authorization", "Bearer " + token)],
                                        body: try JSONSerialization.data(withJSONObject: envelope))
        let client = try HTTPClient()
        do {
            var statuses: [Int] = []
            for _ in 0..<copies { statuses.append(try await client.send(request).status) }
            await client.shutdown()
            return statuses
        } catch {
            await client.shutdown()
            throw error
        }
    }

    @Test(arguments: [1, 200])
    func anIDThatFitsIsMirroredAndDeduplicated(length: Int) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let bought = try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
                                                 obfuscatedAccountId: customer.token.uuidString, silent: true)
            let token = try #require(bought.purchaseToken)
            let messageID = String(repeating: "7", count: length)
            #expect(try await post(pipeline, messageID: messageID, purchaseToken: token, copies: 2) == [200, 200])
            try await pipeline.settle()
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.receiptOutcome(messageID) == "mirrored")
            #expect(try await pipeline.count("SELECT count(*) FROM invoices") == 1)
            #expect(pipeline.retriedJobs() == 0)
        }
    }

    @Test(arguments: [201, 256])
    func aLongerIDIsRefusedAtIngest(length: Int) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let bought = try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
                                                 silent: true)
            let messageID = String(repeating: "7", count: length)
            #expect(try await post(pipeline, messageID: messageID, purchaseToken: try #require(bought.purchaseToken)) == [400])
            try await pipeline.settle()
            #expect(try await pipeline.count("SELECT count(*) FROM jobs") == 0)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.count("SELECT count(*) FROM notification_receipts") == 0)
            #expect(play.requestCount(.subscriptionsV2) == 0)
        }
    }
}
