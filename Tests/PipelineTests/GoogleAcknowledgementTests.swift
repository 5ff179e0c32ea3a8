import Foundation
import HTTP
import Logging
import Mirror
import Queue
@testable import Sync
import Testing
@testable import Worker

/// `google.acknowledge` updates its purchase's row, which the lineage's mirrors update too.
@Suite struct GoogleAcknowledgementTests {
    /// Its outcome must go to the lineage's flusher: committed by another one, a batch of acknowledgements and
    /// a batch of mirrors could each hold a purchase row the other wanted, and PostgreSQL broke the deadlock
    /// by failing every job of one batch. After an upgrade the token to acknowledge is not the lineage's first
    /// token, and the key must still be the lineage's.
    @Test func anAcknowledgementCommitsUnderItsLineagesSerialKey() async throws {
        try await Pipeline.with(GooglePipelineTests.production) { pipeline in
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

            let task = GoogleAcknowledgement.Task(connectionID: connection.id, purchaseID: purchaseID,
                                                  productID: "pro.yearly", token: upgraded)
            let job = LeasedJob(id: 1, kind: GoogleAcknowledgement.kind,
                                payload: String(decoding: try JSONEncoder().encode(task), as: UTF8.self), raw: nil,
                                headers: nil, priority: GoogleAcknowledgement.priority, attempt: 1, maxAttempts: 25,
                                createdAt: Date(), uniqueKey: nil)
            let handler = GoogleAcknowledgeHandler(registry: GoogleConnectionRegistry(http: try HTTPClient(),
                                                                                      rateLimitShare: 1, metrics: nil))
            let result = try await handler.run(job, context: JobContext(logger: Logger(component: "test"),
                                                                        pool: pipeline.database.pool, workerID: "test"))
            #expect(result.serialKey == Mirror.lockKey(connectionID: connection.id, lineage: first))
        }
    }
}
