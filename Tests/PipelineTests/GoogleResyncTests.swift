import Foundation
import Postgres
import Queue
import Simulator
import Testing

/// Google's side of the daily resync and the voided-purchases sweep.
@Suite struct GoogleResyncTests {
    private func lineage(_ pipeline: Pipeline, token: String) async throws -> String {
        try #require(try await pipeline.database.pool.query("""
            SELECT p.lineage FROM purchase_tokens t JOIN store_purchases p ON p.id = t.purchase_id WHERE t.purchase_token = $1
            """, [token]).first).decode(0)
    }

    private func run(_ pipeline: Pipeline, _ kind: String, _ payload: String) async throws {
        _ = try await JobQueue(pool: pipeline.database.pool).enqueue(NewJob(kind: kind, payload: payload))
        try await pipeline.settle()
    }

    @Test func aSilentRenewalIsBookedByTheDailyResyncAsDrift() async throws {
        var options = Pipeline.Options()
        options.googleEnvironment = .production
        try await Pipeline.with(options) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let token = try #require(try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999,
                                                             currency: "USD", obfuscatedAccountId: customer.token.uuidString)
                .purchaseToken)
            try await pipeline.settle()
            try await play.renew(token, silent: true)
            try await run(pipeline, "sync.daily", #"{"schedule":"daily-sync","period":"2026-11-29"}"#)
            let lineage = try await lineage(pipeline, token: token)
            #expect(try await pipeline.invoices(lineage).count == 2)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_events WHERE kind = 'drift'") == 1)
            // An expiry nobody was told about, the next day.
            try await play.cancel(token, silent: true)
            try await play.expire(token, silent: true)
            try await run(pipeline, "sync.daily", #"{"schedule":"daily-sync","period":"2026-11-30"}"#)
            #expect(try await pipeline.subscription(lineage)?.state == "expired")
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_events WHERE kind = 'drift'") == 2)
        }
    }

    @Test func aRefundWhoseNotificationWasLostIsBookedByTheVoidedSweep() async throws {
        var options = Pipeline.Options()
        options.googleEnvironment = .production
        try await Pipeline.with(options) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let bought = try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
                                                 obfuscatedAccountId: customer.token.uuidString)
            let token = try #require(bought.purchaseToken)
            try await pipeline.settle()
            // Refund the order silently: no notification. Then let Google's clock catch up with this machine's
            // (the simulator's started ten minutes back): Google refuses a window that ends in its future.
            try await play.refund(token, orderId: bought.orderId, revoke: false, silent: true)
            play.advanceClock(to: Date().addingTimeInterval(120))
            let googleID = try #require(pipeline.googleConnection).id
            try await run(pipeline, "google.sweep", #"{"connection_id":\#(googleID)}"#)
            let lineage = try await lineage(pipeline, token: token)
            #expect(try await pipeline.refunds(lineage).map(\.transactionID) == [try #require(bought.orderId)])
            // Swept again: nothing new.
            try await run(pipeline, "google.sweep", #"{"connection_id":\#(googleID)}"#)
            #expect(try await pipeline.refunds(lineage).count == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
            #expect(try await pipeline.count("""
                SELECT count(*) FROM sweep_watermarks WHERE sweep = 'google.voided-purchases' AND cursor IS NULL
                """) == 1)
        }
    }
}
