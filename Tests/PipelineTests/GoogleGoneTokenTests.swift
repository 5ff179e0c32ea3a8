import Foundation
import GooglePlay
import Postgres
import Queue
import Simulator
@testable import Sync
import Testing

/// Refunds of a purchase token Google no longer answers for (410 about 60 days after the subscription expired):
/// `orders.get` still answers, so the voided order's refund is booked on its invoice — once, from a push or the
/// voided-purchases sweep — and the mirror keeps the subscription's state.
@Suite struct GoogleGoneTokenTests {
    /// A customer's monthly purchase, mirrored (through its cancellation and expiry with `expired`); then Google
    /// forgets the token. Expiring moves Google's clock to the period's end, an hour ahead of this machine's, past
    /// the end of any voided-purchases window a sweep reads now: a test of the sweep keeps the purchase active.
    private func forgottenPurchase(_ pipeline: Pipeline, expired: Bool = true) async throws
        -> (token: String, orderID: String, lineage: String)
    {
        let play = try #require(pipeline.play)
        let customer = try await pipeline.customer()
        let bought = try await pipeline.buyOnPlay(token: customer.token)
        let token = try #require(bought.purchaseToken)
        if expired {
            try await play.cancel(token)
            try await play.expire(token)
        }
        try await pipeline.settle()
        try await play.expireLongAgo(token, silent: true)
        return (token, try #require(bought.orderId), try await pipeline.lineage(ofPlayToken: token))
    }

    /// Everything a refund-only update must leave as it was: the purchase row and the customer subscription.
    private func mirroredState(_ pipeline: Pipeline, _ lineage: String) async throws -> [String] {
        let row = try #require(try await pipeline.database.pool.query("""
            SELECT p.store_state, p.expires_at::text, p.as_of::text, p.snapshot::text, p.updated_at::text,
                   s.store_state, s.status, s.expires_at::text, s.auto_renew::text, s.updated_at::text
            FROM store_purchases p JOIN customer_subscriptions s ON s.purchase_id = p.id WHERE p.lineage = $1
            """, [lineage]).first)
        return try (0..<10).map { try row.decode($0, as: String.self) }
    }

    private func run(_ pipeline: Pipeline, _ kind: JobKind, _ payload: String) async throws {
        _ = try await JobQueue(pool: pipeline.database.pool).enqueue(NewJob(kind: kind.name, payload: payload))
        try await pipeline.settle()
    }

    /// The `google.resync` the voided-purchases sweep queues for `orderID` of `lineage`, voided at `voidedAt`.
    private func sweepsResync(_ pipeline: Pipeline, orderID: String, voidedAt: Date, lineage: String) async throws {
        let payload = try JobPayload.encode(GoogleSweepHandler.resyncArgs(VoidedOrder(orderID: orderID, voidedAt: voidedAt),
                                                                          connectionID: try #require(pipeline.googleConnection).id,
                                                                          lineage: lineage))
        try await run(pipeline, GoogleResyncHandler.kind, payload)
    }

    @Test func aVoidedPurchasePushForAForgottenTokenBooksTheRefundOnceAndKeepsTheState() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let (token, orderID, lineage) = try await forgottenPurchase(pipeline)
            let before = try await mirroredState(pipeline, lineage)
            #expect(before[0] == "expired" && before[6] == "expired")

            let refunded = try await play.refund(token, revoke: false)
            #expect(refunded.orderId == orderID)
            try await pipeline.settle()
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.refunds(lineage).map { "\($0.transactionID) \($0.amount) \($0.reversed)" }
                    == ["\(orderID) 999 false"])
            #expect(try await pipeline.count("""
                SELECT count(*) FROM refunds r JOIN invoices i ON i.id = r.invoice_id JOIN payments p ON p.id = r.payment_id
                WHERE i.store_transaction_id = $1 AND p.invoice_id = i.id
                """, [orderID]) == 1)
            #expect(try await mirroredState(pipeline, lineage) == before)
            let messageID = try #require(refunded.pushes.first?.messageId)
            #expect(try await pipeline.receiptOutcome(messageID)?.hasPrefix("mirrored refunds only") == true)
            #expect(try await pipeline.count("""
                SELECT count(*) FROM purchase_events
                WHERE kind = 'refund_booked' AND reference = $1 AND store_event = 'VOIDED_PURCHASE' AND detail->>'transaction_id' = $2
                """, [messageID, orderID]) == 1)

            // The same push again, then the resync the voided-purchases sweep queues for the order: nothing more.
            _ = try await play.resendLastPush()
            try await pipeline.settle()
            try await sweepsResync(pipeline, orderID: orderID, voidedAt: play.now, lineage: lineage)
            #expect(try await pipeline.refunds(lineage).count == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_events WHERE kind = 'refund_booked'") == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_events WHERE kind = 'drift'") == 0)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await mirroredState(pipeline, lineage) == before)
        }
    }

    @Test func aLostVoidedPurchaseOfAForgottenTokenIsBookedByTheSweepAsDrift() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let (token, orderID, lineage) = try await forgottenPurchase(pipeline, expired: false)
            let before = try await mirroredState(pipeline, lineage)
            try await play.refund(token, revoke: false, silent: true)
            // Google's clock catches up with this machine's: Google refuses a window that ends in its future.
            play.advanceClock(to: Date().addingTimeInterval(120))
            let sweep = #"{"connection_id":\#(try #require(pipeline.googleConnection).id)}"#
            try await run(pipeline, GoogleSweepHandler.kind, sweep)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.refunds(lineage).map(\.transactionID) == [orderID])
            #expect(try await pipeline.count("""
                SELECT count(*) FROM purchase_events WHERE kind = 'drift' AND detail->'kinds' = '["refund"]'::jsonb
                """) == 1)
            #expect(try await mirroredState(pipeline, lineage) == before)
            // Swept again: nothing more.
            try await run(pipeline, GoogleSweepHandler.kind, sweep)
            #expect(try await pipeline.refunds(lineage).count == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_events WHERE kind = 'drift'") == 1)
        }
    }

    /// An expired purchase still inside the resync horizon (60 days by default) but past Google's memory: the daily
    /// resync has nothing to read, and a dead letter a day for each such purchase would bury the real ones. One the
    /// mirror still holds live, though, is drift no read can repair, and dead-letters for on-call to see.
    @Test(arguments: [true, false])
    func aDailyResyncOfAForgottenTokenDeadLettersOnlyWhenTheMirrorHoldsItLive(expired: Bool) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let (_, _, lineage) = try await forgottenPurchase(pipeline, expired: expired)
            let before = try await mirroredState(pipeline, lineage)
            let task = ResyncArgs<GoogleJobs>(connectionID: try #require(pipeline.googleConnection).id, lineage: lineage,
                                              reason: "daily")
            try await run(pipeline, GoogleResyncHandler.kind, try JobPayload.encode(task))
            let reasons = try await pipeline.deadLetterReasons()
            if expired {
                #expect(reasons.isEmpty, "\(reasons)")
            } else {
                #expect(reasons.count == 1 && reasons.first?.contains("gone") == true, "\(reasons)")
            }
            #expect(try await pipeline.count("SELECT count(*) FROM jobs") == 0)
            #expect(try await mirroredState(pipeline, lineage) == before)
        }
    }

    @Test func aVoidedPurchasePushForATokenTheMirrorNeverKnewDeadLettersWithTheReason() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let bought = try await pipeline.buyOnPlay(token: nil, silent: true)
            let token = try #require(bought.purchaseToken)
            try await play.expireLongAgo(token, silent: true)
            try await play.refund(token, revoke: false)
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            let orderID = try #require(bought.orderId)
            #expect(reasons.count == 1, "\(reasons)")
            #expect(reasons.first?.contains("gone") == true && reasons.first?.contains("knows no lineage") == true
                    && reasons.first?.contains(orderID) == true, "\(reasons)")
            #expect(try await pipeline.count("SELECT count(*) FROM refunds") == 0)
        }
    }

    @Test func aVoidedOrderGoogleDoesNotKnowDeadLettersNamingIt() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let (_, _, lineage) = try await forgottenPurchase(pipeline)
            let unknownOrder = "GPA.0000-0000-0000-00000"
            try await sweepsResync(pipeline, orderID: unknownOrder, voidedAt: Date(timeIntervalSince1970: 1_790_000_000),
                                   lineage: lineage)
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.contains("voided order \(unknownOrder)") == true, "\(reasons)")
            #expect(try await pipeline.count("SELECT count(*) FROM refunds") == 0)
        }
    }
}
