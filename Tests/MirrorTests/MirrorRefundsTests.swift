import Foundation
import Mirror
import Postgres
import StoreModel
import TestSupport
import Testing

/// `Mirror.applyRefunds` against a real database: the refunds of a lineage whose purchase the store no longer
/// answers for are booked on their charges' invoices, once, growing only — and nothing else changes.
@Suite struct MirrorRefundsTests {
    private static let source = SnapshotSource(kind: "notification", reference: "message-9", event: "VOIDED_PURCHASE")

    private static func update(_ refunds: [(String, StoreRefund)], lineage: String = "token-a", asOfDay: Int = 90)
        -> StoreRefundUpdate
    {
        StoreRefundUpdate(store: .google, lineage: lineage,
                          refunds: refunds.map { StoreRefundUpdate.Refund(transactionID: $0.0, refund: $0.1) },
                          asOf: Fake.day(asOfDay), source: source)
    }

    /// A Google connection mirroring lineage `token-a`, expired, with two charges `o1` and `o2` booked.
    private func expiredLineage(_ database: TestDatabase) async throws -> AccountFixture {
        let fixture = try await AccountFixture.make(database, store: .google)
        try await fixture.map(AccountFixture.product, basePlanID: "monthly", to: fixture.planPriceID)
        let (_, token) = try await fixture.customerWithToken()
        var snapshot = Fake.snapshot(lineage: "token-a", store: .google, basePlanID: "monthly", state: .expired, autoRenew: false,
                                     token: token, charges: [Fake.charge("o1", day: 0), Fake.charge("o2", day: 30)], asOfDay: 31,
                                     event: "SUBSCRIPTION_EXPIRED")
        snapshot.purchaseToken = "token-a"
        try await fixture.apply(snapshot)
        return fixture
    }

    private func applyRefunds(_ update: StoreRefundUpdate, _ fixture: AccountFixture) async throws -> Mirror.RefundOutcome {
        let connection = fixture.connection
        return try await fixture.database.pool.transaction { db in try Mirror.applyRefunds(update, connection: connection, on: db) }
    }

    private func refusal(_ update: StoreRefundUpdate, _ fixture: AccountFixture) async throws -> MirrorError? {
        do {
            _ = try await applyRefunds(update, fixture)
            return nil
        } catch let error as MirrorError {
            return error
        }
    }

    /// What a refund-only update must never change: the purchase row and the customer subscription.
    private func state(_ fixture: AccountFixture) async throws -> [String] {
        let row = try #require(try await fixture.rows("""
            SELECT p.store_state, p.expires_at::text, p.as_of::text, p.snapshot::text, p.updated_at::text,
                   s.store_state, s.status, s.expires_at::text, s.updated_at::text
            FROM store_purchases p JOIN customer_subscriptions s ON s.purchase_id = p.id
            """).first)
        return try (0..<9).map { try row.decode($0, as: String.self) }
    }

    @Test func aRefundIsBookedOnItsInvoiceAndNothingElseChanges() async throws {
        try await TestDatabase.with { database in
            let fixture = try await expiredLineage(database)
            let before = try await state(fixture)
            let refund = Fake.refund(day: 85, kind: "full", reason: "CHARGEBACK")
            let outcome = try await applyRefunds(Self.update([("o1", refund)]), fixture)
            #expect(outcome.state == .expired && outcome.refundsBooked == 1)
            #expect(outcome.summary == "refunds only, kept expired: 1 refund(s) booked")

            let row = try #require(try await fixture.rows("""
                SELECT r.amount_minor, r.currency, r.kind, r.reason, r.refunded_at, r.invoice_id = i.id, r.payment_id = p.id,
                       i.purchase_id
                FROM refunds r JOIN invoices i ON i.store_transaction_id = 'o1' JOIN payments p ON p.invoice_id = i.id
                """).first)
            #expect(try row.decode(0, as: Int64.self) == 999 && row.decode(1, as: String.self) == "USD")
            #expect(try row.decode(2, as: String.self) == "full" && row.decode(3, as: String.self) == "CHARGEBACK")
            #expect(try row.decode(4, as: Date.self) == Fake.day(85))
            #expect(try row.decode(5, as: Bool.self) && row.decode(6, as: Bool.self))
            #expect(try row.decode(7, as: Int64.self) == outcome.purchaseID)
            #expect(try await state(fixture) == before)
            let events = try await fixture.rows("""
                SELECT kind, source, reference, store_event, detail->>'transaction_id' FROM purchase_events
                WHERE purchase_id = $1 AND reference = 'message-9'
                """, [outcome.purchaseID]).map { row in try (0..<5).map { try row.decode($0, as: String.self) } }
            #expect(events == [["refund_booked", "notification", "message-9", "VOIDED_PURCHASE", "o1"]])
        }
    }

    @Test func theSameRefundAgainOrSmallerBooksNothingAndALargerOneGrowsIt() async throws {
        try await TestDatabase.with { database in
            let fixture = try await expiredLineage(database)
            let partial = Fake.refund(minorUnits: 400, day: 80, kind: "partial")
            #expect(try await applyRefunds(Self.update([("o2", partial)]), fixture).refundsBooked == 1)
            #expect(try await applyRefunds(Self.update([("o2", partial)], asOfDay: 91), fixture).refundsBooked == 0)
            let smaller = Fake.refund(minorUnits: 100, day: 70, kind: "partial")
            #expect(try await applyRefunds(Self.update([("o2", smaller)], asOfDay: 92), fixture).refundsBooked == 0)
            #expect(try await fixture.count("SELECT amount_minor FROM refunds") == 400)
            let full = Fake.refund(minorUnits: 999, day: 85, kind: "full")
            #expect(try await applyRefunds(Self.update([("o2", full)], asOfDay: 93), fixture).refundsBooked == 1)
            let grown = try await fixture.rows("SELECT amount_minor, kind FROM refunds")
            #expect(grown.count == 1)
            #expect(try grown[0].decode(0, as: Int64.self) == 999 && grown[0].decode(1, as: String.self) == "full")
            #expect(try await fixture.count("SELECT count(*) FROM purchase_events WHERE kind = 'refund_booked'") == 2)
        }
    }

    @Test func aLineageTheConnectionDoesNotMirrorIsRefusedAndNothingIsWritten() async throws {
        try await TestDatabase.with { database in
            let fixture = try await expiredLineage(database)
            let before = try await fixture.mirrorRowCounts()
            let error = try await refusal(Self.update([("o1", Fake.refund(day: 85))], lineage: "token-z"), fixture)
            #expect(error?.code == .unknownPurchase && error?.message.contains("token-z") == true, "\(String(describing: error))")
            #expect(try await fixture.mirrorRowCounts() == before)
        }
    }

    @Test func aRefundOfAChargeWithoutAnInvoiceOnTheLineageIsRefusedNamingItAndNothingIsWritten() async throws {
        try await TestDatabase.with { database in
            let fixture = try await expiredLineage(database)
            let before = try await fixture.mirrorRowCounts()
            let error = try await refusal(Self.update([("o1", Fake.refund(day: 85)), ("o9", Fake.refund(day: 85))]), fixture)
            #expect(error?.code == .chargeNotBooked, "\(String(describing: error))")
            #expect(error?.message.contains("o9") == true && error?.message.contains("o1") == false, "\(String(describing: error))")
            #expect(try await fixture.mirrorRowCounts() == before)
        }
    }

    @Test func anUpdateWithoutRefundsWritesNothing() async throws {
        try await TestDatabase.with { database in
            let fixture = try await expiredLineage(database)
            let before = try await fixture.mirrorRowCounts()
            let outcome = try await applyRefunds(Self.update([]), fixture)
            #expect(outcome.refundsBooked == 0 && outcome.summary == "refunds only, kept expired: nothing new")
            #expect(try await fixture.mirrorRowCounts() == before)
        }
    }
}
