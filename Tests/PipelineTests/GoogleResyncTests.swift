import Foundation
import GooglePlay
import Postgres
import Queue
import Simulator
@testable import Sync
import Testing

/// Google's side of the daily resync and the voided-purchases sweep.
@Suite struct GoogleResyncTests {
    private func run(_ pipeline: Pipeline, _ kind: JobKind, _ payload: String) async throws {
        _ = try await JobQueue(pool: pipeline.database.pool).enqueue(NewJob(kind: kind.name, payload: payload))
        try await pipeline.settle()
    }

    @Test func aSilentRenewalIsBookedByTheDailyResyncAsDrift() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let (token, _, lineage) = try await pipeline.mirroredPlayPurchase()
            try await play.renew(token, silent: true)
            try await run(pipeline, "sync.daily", #"{"schedule":"daily-sync","period":"2026-11-29"}"#)
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

    /// A customer's purchase, mirrored, then refunded silently (no notification), with Google's clock caught up with
    /// this machine's (the simulator's starts ten minutes back): Google refuses a window that ends in its future.
    private func silentlyRefundedPurchase(_ pipeline: Pipeline) async throws -> (lineage: String, orderID: String, googleID: Int64) {
        let play = try #require(pipeline.play)
        let (token, orderID, lineage) = try await pipeline.mirroredPlayPurchase()
        try await play.refund(token, orderId: orderID, revoke: false, silent: true)
        play.advanceClock(to: Date().addingTimeInterval(120))
        return (lineage, orderID, try #require(pipeline.googleConnection).id)
    }

    @Test func aRefundWhoseNotificationWasLostIsBookedByTheVoidedSweep() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let (lineage, orderID, googleID) = try await silentlyRefundedPurchase(pipeline)
            try await run(pipeline, "google.sweep", #"{"connection_id":\#(googleID)}"#)
            #expect(try await pipeline.refunds(lineage).map(\.transactionID) == [orderID])
            // Swept again: nothing new.
            try await run(pipeline, "google.sweep", #"{"connection_id":\#(googleID)}"#)
            #expect(try await pipeline.refunds(lineage).count == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
            #expect(try await pipeline.count("""
                SELECT count(*) FROM sweep_watermarks WHERE sweep = 'google.voided-purchases' AND cursor IS NULL
                """) == 1)
        }
    }

    /// A saved page Google no longer takes (400: an expired token, or a start past its 30 days) would fail every
    /// later sweep: the window is read again from its start instead.
    @Test func aSavedPageGoogleRefusesIsReadAgainFromTheWindowStart() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let (lineage, orderID, googleID) = try await silentlyRefundedPurchase(pipeline)
            let end = Date()
            try await pipeline.database.pool.query("""
                INSERT INTO sweep_watermarks (connection_id, sweep, watermark, cursor)
                VALUES ($1, 'google.voided-purchases', $2, $3)
                """, [googleID, end.addingTimeInterval(-3600), "\(Int64(end.timeIntervalSince1970 * 1000)):bogus"])
            try await run(pipeline, "google.sweep", #"{"connection_id":\#(googleID)}"#)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.refunds(lineage).map(\.transactionID) == [orderID])
            #expect(try await pipeline.count("""
                SELECT count(*) FROM sweep_watermarks WHERE sweep = 'google.voided-purchases' AND cursor IS NULL
                """) == 1)
        }
    }

    /// In a chain of four tokens (a purchase, then an upgrade, a downgrade and an upgrade), the voided list names
    /// the second token's order: neither the first token nor the one the current token replaced, but still the
    /// lineage's. Its resync (which fetches the current token) books the refund instead of refusing the order as
    /// another purchase's.
    @Test func aVoidedOrderOfAMiddleTokenIsBookedOnItsLineage() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let first = try #require(try await pipeline.buyOnPlay(token: customer.token).purchaseToken)
            let middle = try await play.upgrade(first, to: "pro.yearly", basePlanId: "yearly", price: 9_999)
            let middleToken = try #require(middle.purchaseToken)
            let middleOrder = try #require(middle.orderId)
            let third = try #require(try await play.downgrade(middleToken, to: "pro.monthly", basePlanId: "monthly", price: 999)
                                        .purchaseToken)
            _ = try await play.upgrade(third, to: "pro.yearly", basePlanId: "yearly", price: 9_999)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: middleToken)
            #expect(lineage == first)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_tokens") == 4)

            let record = VoidedPurchase(purchaseToken: middleToken, orderId: middleOrder, voidedTimeMillis: 1_790_000_000_000,
                                        voidedReason: 0)
            let voided = try #require(VoidedOrder(record, listedBy: Date()))
            try await run(pipeline, GoogleResyncHandler.kind, try JobPayload.encode(GoogleSweepHandler.resyncArgs(
                voided, connectionID: try #require(pipeline.googleConnection).id, lineage: lineage)))
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
            #expect(try await pipeline.refunds(lineage).map(\.transactionID) == [middleOrder])
        }
    }

    /// Google's voided list names an order whose own history shows no refund yet (the simulated order stays
    /// unrefunded), in a record without `voidedTimeMillis`: the sweep's resync books the refund from the record,
    /// dated by the window that listed it and with Google's reason; the next resync, which fetches the order
    /// again without the record, leaves it live — Google's refunds are final.
    @Test func aRefundBookedFromTheVoidedListAloneSurvivesTheNextResync() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let customer = try await pipeline.customer()
            let bought = try await pipeline.buyOnPlay(token: customer.token)
            let token = try #require(bought.purchaseToken)
            let orderID = try #require(bought.orderId)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: token)
            let googleID = try #require(pipeline.googleConnection).id

            let listedBy = Date(timeIntervalSince1970: 1_790_000_000)
            let record = VoidedPurchase(purchaseToken: token, orderId: orderID, voidedTimeMillis: nil, voidedReason: 6)
            let voided = try #require(VoidedOrder(record, listedBy: listedBy))
            try await run(pipeline, GoogleResyncHandler.kind,
                          try JobPayload.encode(GoogleSweepHandler.resyncArgs(voided, connectionID: googleID, lineage: lineage)))
            #expect(try await pipeline.refunds(lineage).map { "\($0.transactionID) \($0.amount) \($0.reversed)" }
                    == ["\(orderID) 999 false"])
            let booked = try #require(try await pipeline.database.pool.query("SELECT refunded_at, reason FROM refunds").first)
            #expect(try booked.decode(0, as: Date.self) == listedBy)
            #expect(try booked.decode(1, as: String.self) == "FRIENDLY_FRAUD")

            try await run(pipeline, GoogleResyncHandler.kind, #"{"connection_id":\#(googleID),"lineage":"\#(lineage)"}"#)
            #expect(try await pipeline.refunds(lineage).map(\.reversed) == [false])
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_events WHERE kind = 'refund_reversed'") == 0)
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
        }
    }

    @Test func theSweepsResyncPayloadCarriesTheVoidedOrderWhole() throws {
        let listed = VoidedOrder(orderID: "GPA.1111-2222-3333-44444..2", voidedAt: Date(timeIntervalSince1970: 1_790_000_000.125),
                                 voidedQuantity: 1, reason: "CHARGEBACK")
        let payload = try JobPayload.encode(GoogleSweepHandler.resyncArgs(listed, connectionID: 7, lineage: "lineage-token"))
        let task = try JobPayload.decode(ResyncArgs<GoogleJobs>.self, from: payload)
        #expect(task.connectionID == 7 && task.lineage == "lineage-token" && task.reason == "voided")
        #expect(task.voided?.map(\.order) == [listed])
    }
}
