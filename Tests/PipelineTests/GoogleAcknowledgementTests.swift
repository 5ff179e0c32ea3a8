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
    /// by failing every job of one batch.
    @Test func anAcknowledgementCommitsUnderItsLineagesSerialKey() async throws {
        var options = GooglePipelineTests.production
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            let play = try #require(pipeline.play)
            let connection = try #require(pipeline.googleConnection)
            let token = try #require(try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999,
                                                             currency: "USD", silent: true).purchaseToken)
            let task = GoogleAcknowledgement.Task(connectionID: connection.id, purchaseID: 1, productID: "pro.monthly",
                                                  token: token, lineage: "first-token-of-the-chain")
            let job = LeasedJob(id: 1, kind: GoogleAcknowledgement.kind,
                                payload: String(decoding: try JSONEncoder().encode(task), as: UTF8.self), raw: nil,
                                headers: nil, priority: GoogleAcknowledgement.priority, attempt: 1, maxAttempts: 25,
                                createdAt: Date(), uniqueKey: nil)
            let handler = GoogleAcknowledgeHandler(registry: GoogleConnectionRegistry(http: try HTTPClient(),
                                                                                      rateLimitShare: 1, metrics: nil))
            let result = try await handler.run(job, context: JobContext(logger: Logger(component: "test"),
                                                                        pool: pipeline.database.pool, workerID: "test"))
            #expect(play.acknowledgements.map(\.purchaseToken) == [token])
            #expect(result.serialKey == Mirror.lockKey(connectionID: connection.id, lineage: "first-token-of-the-chain"))
        }
    }
}
