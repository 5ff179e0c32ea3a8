import Foundation
import Logging
import Mirror
import Postgres
import Queue
import Simulator
import StoreModel
@testable import Sync
import TestSupport
import Testing
import Worker

/// Follow-up resyncs: a history longer than one job may read (the client's page cap) is booked by follow-ups,
/// each reading on from the revision the last one stored, with at most one pending per revision read from (jobs
/// that stopped at the same point share one); refunds only a stale answer showed get one fresh read.
@Suite struct AppleFollowUpTests {
    @Test func aHistoryBeyondThePageCapIsBookedByChainedFollowUps() async throws {
        var options = Pipeline.Options()
        options.appleHistoryPages = 1
        options.appleRenewalPeriod = .seconds(3600)
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token, silent: true)
                .originalTransactionId
            for _ in 0..<43 { try await pipeline.simulator.renew(lineage, silent: true) }
            pipeline.simulator.resetRequestCounts()
            // 45 transactions, 20 a page and one page a job: the notification's job reads the first 20 (and books
            // the latest from the statuses), its follow-up the next 20, and that one's follow-up the last 5.
            try await pipeline.simulator.renew(lineage)
            try await pipeline.settle()

            let transactions = try #require(pipeline.simulator.subscription(lineage)).transactionIds
            #expect(transactions.count == 45)
            let invoiced = try await pipeline.invoices(lineage).map(\.transactionID)
            #expect(invoiced.count == transactions.count && Set(invoiced) == Set(transactions))
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(pipeline.simulator.requestCount(.transactionHistory) == 3)
            #expect(try await pipeline.count("""
                SELECT count(*) FROM purchase_events WHERE source = 'resync' AND reference = $1
                  AND kind IN ('refreshed', 'state_changed')
                """, [AppleFollowUp.historyReason]) == 2)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_events WHERE kind = 'drift'") == 0,
                    "a follow-up books what the first read had no room for, which no notification missed")

            // The stored revision stands at the end: one more resync reads one page and needs no follow-up.
            pipeline.simulator.resetRequestCounts()
            try await pipeline.database.pool.transaction { db in
                _ = try ResyncPlannerProbe.enqueue(pipeline, lineage: lineage, on: db)
            }
            try await pipeline.settle()
            #expect(pipeline.simulator.requestCount(.transactionHistory) == 1)
            #expect(try await pipeline.invoices(lineage).count == 45)
        }
    }

    @Test func oneFollowUpIsPendingPerRevisionAndARunningOneQueuesTheNext() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            let pool = pipeline.database.pool
            let lineage = "200000000000042"
            try await pool.query("""
                INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state, expires_at,
                                             snapshot, as_of)
                VALUES ($1, $2, 'Production', 'pro.monthly', 'active', now() + interval '20 days', '{}', now())
                """, [pipeline.connection.id, lineage])
            func followUp(from revision: String) async throws -> Bool {
                try await pool.transaction { db in
                    try AppleFollowUp.enqueueHistory(connection: pipeline.connection, lineage: lineage, from: revision,
                                                         on: db)
                }
            }
            #expect(try await followUp(from: "r1"))
            #expect(try await followUp(from: "r1") == false, "jobs that stopped at the same point share one follow-up")

            let leased = try await pool.withConnection { connection in
                try await JobQueue.lease(owner: "test", limit: 10, duration: .seconds(60), on: connection)
            }
            let running = try #require(leased.first)
            #expect(leased.count == 1 && running.kind == "apple.resync")
            #expect(running.payload.contains(#""reason": "history continues""#), "\(running.payload)")
            // While the follow-up runs it holds its key; finding more, it stores r2 and queues the next one.
            #expect(try await followUp(from: "r2"))
            let keys: [String?] = try await pool.query("SELECT unique_key FROM jobs ORDER BY id").map { try $0.decodeOptional(0) }
            #expect(keys.count == 2 && keys.first == running.uniqueKey && keys.first != keys.last)
            #expect(keys.allSatisfy { $0?.hasPrefix("resync:history-") == true
                && $0?.contains(":\(pipeline.connection.id):") == true }, "\(keys)")
            #expect(try await followUp(from: "r2") == false)
        }
    }

    /// A stale answer's refunds are not booked (`StoreSnapshot.refundsReversible`), but the reads of two answers
    /// are not ordered exactly by their `asOf`: the job has a fresh read decide, one pending per stale answer.
    @Test func aStaleAnswerShowingARefundQueuesOneRefundCheck() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let lineage = "200000000000077"
            func snapshot(asOf: Date, refunded: Bool) -> StoreSnapshot {
                let charge = StoreCharge(transactionID: lineage, productID: "pro.monthly",
                                         amount: Money(minorUnits: 999, currency: "USD"), chargedAt: asOf, periodStart: asOf,
                                         periodEnd: asOf.addingTimeInterval(30 * 86_400), reason: "purchase",
                                         refund: refunded ? StoreRefund(amount: Money(minorUnits: 999, currency: "USD"),
                                                                        refundedAt: asOf, kind: "full", reason: nil) : nil)
                return StoreSnapshot(store: .apple, lineage: lineage, environment: .production, productID: "pro.monthly",
                                     basePlanID: nil, state: refunded ? .revoked : .active, periodStart: asOf,
                                     expiresAt: asOf.addingTimeInterval(30 * 86_400), graceEndsAt: nil, autoRenew: true,
                                     inFreeTrial: false, ownership: .purchased, accountToken: customer.token.uuidString.lowercased(), charges: [charge],
                                     refundsReversible: true, asOf: asOf,
                                     source: SnapshotSource(kind: "notification", reference: nil, event: "REFUND"), raw: "{}")
            }
            let now = Date()
            func apply(_ snapshot: StoreSnapshot) async throws -> Mirror.Outcome {
                try await pipeline.database.pool.transaction { db in
                    let outcome = try Mirror.apply(snapshot, connection: pipeline.connection, on: db)
                    try AppleFollowUp.follow(AppleRefetch.Result(snapshot: snapshot, hasMore: false),
                                             outcome: outcome, connection: pipeline.connection,
                                             logger: Logger(component: "test"), on: db)
                    return outcome
                }
            }
            let fresh = try await apply(snapshot(asOf: now, refunded: false))
            #expect(fresh.applied && fresh.staleRefunds == 0)
            let checks = "SELECT count(*) FROM jobs WHERE kind = 'apple.resync' AND payload->>'reason' = $1"
            #expect(try await pipeline.count(checks, [AppleFollowUp.refundCheckReason]) == 0)

            for _ in 0..<2 {
                let stale = try await apply(snapshot(asOf: now.addingTimeInterval(-60), refunded: true))
                #expect(!stale.applied && stale.refundsBooked == 0 && stale.staleRefunds == 1)
            }
            #expect(try await pipeline.count(checks, [AppleFollowUp.refundCheckReason]) == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM refunds") == 0)
        }
    }
}
