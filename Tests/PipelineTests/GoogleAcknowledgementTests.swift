import Foundation
import HTTP
import Logging
import Mirror
import Queue
@testable import Sync
import StoreModel
import Testing
@testable import Worker

/// Google refunds every purchase token left unacknowledged for three days, a replacement token as much as the
/// first; `google.acknowledge` updates its token's and its purchase's rows, which the lineage's mirrors update too.
@Suite struct GoogleAcknowledgementTests {
    enum Change: String, CaseIterable { case upgrade, downgrade }

    /// The token an upgrade or downgrade issues is acknowledged on its own, after the first token was.
    @Test(arguments: Change.allCases)
    func aReplacementTokenIsAcknowledgedAfterTheFirst(change: Change) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let (from, to) = change == .upgrade ? (("pro.monthly", "monthly", Int64(999)), ("pro.yearly", "yearly", Int64(9_999)))
                : (("pro.yearly", "yearly", 9_999), ("pro.monthly", "monthly", 999))
            let first = try #require(try await play.purchase(productId: from.0, basePlanId: from.1, price: from.2, currency: "USD",
                                                             obfuscatedAccountId: customer.token.uuidString).purchaseToken)
            try await pipeline.settle()
            #expect(play.acknowledgements.map(\.purchaseToken) == [first])

            let replaced = change == .upgrade
                ? try await play.upgrade(first, to: to.0, basePlanId: to.1, price: to.2)
                : try await play.downgrade(first, to: to.0, basePlanId: to.1, price: to.2)
            let second = try #require(replaced.purchaseToken)
            try await pipeline.settle()
            #expect(play.acknowledgements.map(\.purchaseToken) == [first, second])
            #expect(play.acknowledgements.last?.subscriptionId == to.0)
            #expect(play.subscription(second)?.acknowledged == true)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_tokens WHERE acknowledged_at IS NOT NULL") == 2)
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases WHERE needs_acknowledgement") == 0)
            #expect(try await pipeline.deadLetterReasons().isEmpty)

            // Later news of either token queues no acknowledgement again.
            try await play.renew(second)
            try await pipeline.settle()
            #expect(play.acknowledgements.count == 2)
        }
    }

    /// A purchase needs no acknowledgement any more once its current token has one; acknowledging a token it
    /// replaced does not clear that.
    @Test func onlyTheCurrentTokensAcknowledgementClearsThePurchasesFlag() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let connection = try #require(pipeline.googleConnection)
            let customer = try await pipeline.customer()
            let first = try #require(try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999,
                                                             currency: "USD", obfuscatedAccountId: customer.token.uuidString,
                                                             silent: true).purchaseToken)
            let second = try #require(try await play.upgrade(first, to: "pro.yearly", basePlanId: "yearly", price: 9_999)
                                        .purchaseToken)
            try await pipeline.settle()
            let pool = pipeline.database.pool
            let purchaseID: Int64 = try await pool.query("SELECT id FROM store_purchases")[0].decode(0)
            // As if neither acknowledgement had been sent yet.
            _ = try await pool.query("UPDATE purchase_tokens SET acknowledged_at = NULL")
            _ = try await pool.query("UPDATE store_purchases SET needs_acknowledgement = true, acknowledged_at = NULL")
            func acknowledge(_ token: String, _ product: String) async throws -> Bool {
                try await pool.transaction { db in
                    try GoogleAcknowledgeHandler.record(GoogleAcknowledgementArgs(connectionID: connection.id,
                                                                                  purchaseID: purchaseID,
                                                                                  productID: product, token: token,
                                                                                  lineage: nil), on: db)
                    return try db.query("SELECT needs_acknowledgement FROM store_purchases WHERE id = $1",
                                        [purchaseID])[0].decode(0)
                }
            }
            #expect(try await acknowledge(first, "pro.monthly"), "the replaced token's acknowledgement cleared the flag")
            #expect(try await acknowledge(second, "pro.yearly") == false)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_tokens WHERE acknowledged_at IS NOT NULL") == 2)
        }
    }

    /// An answer fetched before the acknowledgement committed still says "pending"; applied after it, it must not
    /// set the purchase's flag again (the acknowledge job is not queued again either: the token says it is done).
    @Test func anAnswerFetchedBeforeTheAcknowledgementDoesNotRaiseTheFlagAgain() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let connection = try #require(pipeline.googleConnection)
            let customer = try await pipeline.customer()
            let token = try #require(try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999,
                                                             currency: "USD", obfuscatedAccountId: customer.token.uuidString)
                                        .purchaseToken)
            try await pipeline.settle()
            #expect(play.acknowledgements.count == 1)
            let pending = StoreSnapshot(store: .google, lineage: token, environment: .production, productID: "pro.monthly",
                                        basePlanID: "monthly", state: .active, periodStart: Date(),
                                        expiresAt: Date().addingTimeInterval(30 * 86_400), graceEndsAt: nil, autoRenew: true,
                                        inFreeTrial: false, ownership: .purchased,
                                        accountToken: customer.token.uuidString.lowercased(), charges: [],
                                        purchaseToken: token, needsAcknowledgement: true, asOf: Date().addingTimeInterval(60),
                                        source: SnapshotSource(kind: "notification", reference: nil, event: "SUBSCRIPTION_RENEWED"),
                                        raw: "{}")
            let outcome = try await pipeline.database.pool.transaction { db in
                let outcome = try Mirror.apply(pending, connection: connection, on: db)
                try GoogleAcknowledgement.scheduleIfNeeded(pending, outcome: outcome, connection: connection, on: db)
                return outcome
            }
            #expect(outcome.applied)
            #expect(try await pipeline.count("SELECT count(*) FROM jobs WHERE kind = 'google.acknowledge'") == 0)
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases WHERE needs_acknowledgement") == 0)
        }
    }

    /// Its outcome must go to the lineage's flusher: committed by another one, a batch of acknowledgements and
    /// a batch of mirrors could each hold a purchase row the other wanted, and PostgreSQL broke the deadlock
    /// by failing every job of one batch. After an upgrade the token to acknowledge is not the lineage's first
    /// token, and the key must still be the lineage's: the one the task carries, or, in a task queued by a release
    /// before tasks carried it, the one its purchase holds.
    @Test(arguments: [true, false])
    func anAcknowledgementCommitsUnderItsLineagesSerialKey(carried: Bool) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let connection = try #require(pipeline.googleConnection)
            let first = try #require(try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999,
                                                             currency: "USD",
                                                             obfuscatedAccountId: try await pipeline.customer().token.uuidString)
                                        .purchaseToken)
            let upgraded = try #require(try await play.upgrade(first, to: "pro.yearly", basePlanId: "yearly", price: 9_999)
                                            .purchaseToken)
            try await pipeline.settle()
            let row = try await pipeline.database.pool.query("SELECT id, lineage FROM store_purchases")
            #expect(row.count == 1)
            let purchaseID = try row[0].decode(0, as: Int64.self)
            #expect(try row[0].decode(1, as: String.self) == first)

            let task = GoogleAcknowledgementArgs(connectionID: connection.id, purchaseID: purchaseID,
                                                 productID: "pro.yearly", token: upgraded, lineage: carried ? first : nil)
            let job = LeasedJob(id: 1, kind: GoogleAcknowledgementArgs.kind.name, payload: try JobPayload.encode(task), raw: nil,
                                headers: nil, priority: GoogleAcknowledgement.priority, attempt: 1, maxAttempts: 25,
                                createdAt: Date(), uniqueKey: nil)
            let handler = GoogleAcknowledgeHandler(clients: GoogleStoreClients(http: try HTTPClient(),
                                                                                      rateLimitShare: 1, metrics: nil))
            let result = try await handler.run(job, context: JobContext(logger: Logger(component: "test"),
                                                                        pool: pipeline.database.pool, workerID: "test"))
            #expect(result.serialKey == Mirror.lockKey(connectionID: connection.id, lineage: first))
        }
    }
}
