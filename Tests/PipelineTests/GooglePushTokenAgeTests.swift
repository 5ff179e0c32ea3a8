import Crypto
import Foundation
import Postgres
import Queue
import Simulator
import Testing

/// A push is authenticated as of when ingest received it: a genuine token that expired while its job waited
/// in a backlog, was retried or was replayed from the dead letters still lets the push through, and a token
/// already expired on arrival is still refused. Lateness is made deterministic by storing the push as ingest
/// would have ten minutes ago, with a token the test signs with a key the simulated Google publishes.
@Suite struct GooglePushTokenAgeTests {
    /// How long ago the push "arrived": well past a token expiring shortly after arrival, skew included.
    static let lateness: TimeInterval = 600

    /// A silent purchase and a push about it dated `lateness` ago, whose token expires `expiresAfterReceipt`
    /// seconds after that arrival: the body and `Authorization` value ingest would have stored.
    private func latePush(_ pipeline: Pipeline, expiresAfterReceipt: Int)
        async throws -> (purchaseToken: String, messageID: String, body: Data, authorization: String, receivedAt: Date) {
        let play = try #require(pipeline.play)
        let signingKey = try PrivateKey.generate(.rsa(bits: 2048))
        let kid = try play.rotatePushKey(to: signingKey)
        let customer = try await pipeline.customer()
        let bought = try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
                                             obfuscatedAccountId: customer.token.uuidString, silent: true)
        let purchaseToken = try #require(bought.purchaseToken)
        let receivedAt = Date().addingTimeInterval(-Self.lateness)

        let notification: [String: Any] = [
            "version": "1.0", "packageName": Pipeline.packageName,
            "eventTimeMillis": String(Int64(receivedAt.timeIntervalSince1970 * 1000)),
            "subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": purchaseToken],
        ]
        let messageID = "late-\(UUID().uuidString)"
        let envelope: [String: Any] = [
            "message": ["data": try JSONSerialization.data(withJSONObject: notification).base64EncodedString(),
                        "messageId": messageID] as [String: Any],
            "subscription": "projects/storesync-simulator/subscriptions/play-rtdn",
        ]
        let expiresAt = Int(receivedAt.timeIntervalSince1970) + expiresAfterReceipt
        let claims: [String: Any] = [
            "iss": "https://accounts.google.com", "aud": Pipeline.pushAudience, "email": Pipeline.pushAccount,
            "email_verified": true, "sub": "104857600000000000001", "iat": expiresAt - 3600, "exp": expiresAt,
        ]
        let token = try CompactJWS.sign(payload: try JSONSerialization.data(withJSONObject: claims), algorithm: .rs256,
                                        key: signingKey, kid: kid, typ: "JWT")
        return (purchaseToken, messageID, try JSONSerialization.data(withJSONObject: envelope), "Bearer " + token, receivedAt)
    }

    /// The first attempt runs ten minutes after arrival and its Play API call fails (500), so the token has
    /// expired by the first attempt and by the retry alike.
    @Test(arguments: [(30, true), (-120, false)])
    func aLateJobJudgesTheTokenAtArrival(expiresAfterReceipt: Int, accepted: Bool) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let push = try await latePush(pipeline, expiresAfterReceipt: expiresAfterReceipt)
            try play.failNextRequests(1)
            // What ingest stores, created (received) ten minutes ago.
            try await pipeline.database.pool.query("""
                INSERT INTO jobs (kind, payload, raw, headers, created_at)
                VALUES ('google.notification', jsonb_build_object('account_id', $1::bigint, 'received_at', $2::timestamptz),
                        $3, jsonb_build_object('authorization', $4::text), $2)
                """, [pipeline.accountID, push.receivedAt, push.body, push.authorization])
            try await pipeline.settle()

            let reasons = try await pipeline.deadLetterReasons()
            if accepted {
                #expect(reasons.isEmpty, "\(reasons)")
                let lineage = try await pipeline.lineage(ofPlayToken: push.purchaseToken)
                #expect(try await pipeline.subscription(lineage)?.state == "active")
                #expect(try await pipeline.receiptOutcome(push.messageID) == "mirrored")
                #expect(pipeline.retriedJobs() == 1, "the first attempt's Play API failure was not retried")
            } else {
                #expect(reasons.count == 1 && reasons.first?.hasPrefix("push authentication failed") == true
                        && reasons.first?.contains("(expired)") == true, "\(reasons)")
                #expect(try await pipeline.count("SELECT count(*) FROM store_purchases") == 0)
                #expect(play.requestCount(.subscriptionsV2) == 0)
            }
        }
    }

    /// `storesync dead-letters retry` puts the job back with its original creation time, so a push that
    /// died for another reason can still be replayed once its token has expired.
    @Test func aDeadLetterReplayedAfterItsTokenExpiredIsMirrored() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let push = try await latePush(pipeline, expiresAfterReceipt: 30)
            let id: Int64 = try await pipeline.database.pool.query("""
                INSERT INTO dead_letters (id, kind, payload, raw, headers, priority, max_attempts, attempts, errors, reason,
                                          job_created_at)
                VALUES (nextval(pg_get_serial_sequence('jobs', 'id')), 'google.notification',
                        jsonb_build_object('account_id', $1::bigint, 'received_at', $2::timestamptz), $3,
                        jsonb_build_object('authorization', $4::text), 0, 25, 25, '[]', 'gave up while Google was down', $2)
                RETURNING id
                """, [pipeline.accountID, push.receivedAt, push.body, push.authorization])[0].decode(0)
            #expect(try await DeadLetters(pool: pipeline.database.pool).retry(ids: [id]) == [id: .requeued])
            try await pipeline.settle()

            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.isEmpty, "\(reasons)")
            let lineage = try await pipeline.lineage(ofPlayToken: push.purchaseToken)
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(try await pipeline.receiptOutcome(push.messageID) == "mirrored")
        }
    }
}
