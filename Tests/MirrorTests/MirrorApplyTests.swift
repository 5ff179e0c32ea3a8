import Foundation
import Mirror
import Postgres
import StoreModel
import TestSupport
import Testing

/// `Mirror.apply` against a real database: linking by the Account Tokens rules, no regressions by `asOf`,
/// environments never mixing, and every store charge and refund booked exactly once.
@Suite struct MirrorApplyTests {
    // MARK: First snapshot and idempotency

    @Test func firstSnapshotOfALinkedPurchaseCreatesPurchaseSubscriptionInvoiceAndPayment() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            let outcome = try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1")]))

            #expect(outcome.applied && outcome.linkedNow && outcome.customerID == customer)
            #expect(outcome.previousState == nil && outcome.state == .active)
            #expect(outcome.chargesBooked == 1 && outcome.refundsBooked == 0 && outcome.refundsReversed == 0)

            let purchase = try #require(try await fixture.rows("""
                SELECT id, connection_id, lineage, environment, customer_id::text, linked_at IS NOT NULL, account_token,
                       ownership, store_product_id, store_state, expires_at, as_of
                FROM store_purchases
                """).first)
            #expect(try purchase.decode(0, as: Int64.self) == outcome.purchaseID)
            #expect(try purchase.decode(1, as: Int64.self) == fixture.connection.id)
            #expect(try purchase.decode(2, as: String.self) == "2000000000000001")
            #expect(try purchase.decode(3, as: String.self) == "Production")
            #expect(try purchase.decode(4, as: String.self) == customer)
            #expect(try purchase.decode(5, as: Bool.self))
            #expect(try purchase.decode(6, as: String.self) == token)
            #expect(try purchase.decode(7, as: String.self) == "purchased")
            #expect(try purchase.decode(8, as: String.self) == AccountFixture.product)
            #expect(try purchase.decode(9, as: String.self) == "active")
            #expect(try purchase.decode(10, as: Date.self) == Fake.day(30))
            #expect(try purchase.decode(11, as: Date.self) == Fake.day(0))

            let subscription = try #require(try await fixture.rows("""
                SELECT id, account_id, customer_id::text, plan_price_id, source, purchase_id, status, store_state,
                       current_period_start, current_period_end, auto_renew, cancelled_at
                FROM customer_subscriptions
                """).first)
            let subscriptionID: Int64 = try subscription.decode(0)
            #expect(try subscription.decode(1, as: Int64.self) == fixture.accountID)
            #expect(try subscription.decode(2, as: String.self) == customer)
            #expect(try subscription.decode(3, as: Int64.self) == fixture.planPriceID)
            #expect(try subscription.decode(4, as: String.self) == "apple")
            #expect(try subscription.decode(5, as: Int64.self) == outcome.purchaseID)
            #expect(try subscription.decode(6, as: String.self) == "active")
            #expect(try subscription.decode(7, as: String.self) == "active")
            #expect(try subscription.decode(8, as: Date.self) == Fake.day(0))
            #expect(try subscription.decode(9, as: Date.self) == Fake.day(30))
            #expect(try subscription.decode(10, as: Bool.self))
            #expect(try subscription.decodeOptional(11, as: Date.self) == nil)

            let invoice = try #require(try await fixture.rows("""
                SELECT i.purchase_id, i.customer_id::text, i.subscription_id, i.store, i.store_transaction_id,
                       i.store_product_id, i.amount_minor, i.currency, i.description, i.period_start, i.period_end,
                       i.issued_at, p.amount_minor, p.currency, p.paid_at, p.store_transaction_id
                FROM invoices i JOIN payments p ON p.invoice_id = i.id
                """).first)
            #expect(try invoice.decode(0, as: Int64.self) == outcome.purchaseID)
            #expect(try invoice.decode(1, as: String.self) == customer)
            #expect(try invoice.decode(2, as: Int64.self) == subscriptionID)
            #expect(try invoice.decode(3, as: String.self) == "apple")
            #expect(try invoice.decode(4, as: String.self) == "t1")
            #expect(try invoice.decode(5, as: String.self) == AccountFixture.product)
            #expect(try invoice.decode(6, as: Int64.self) == 999)
            #expect(try invoice.decode(7, as: String.self) == "USD")
            #expect(try invoice.decode(8, as: String.self) == "purchase \(AccountFixture.product)")
            #expect(try invoice.decode(9, as: Date.self) == Fake.day(0))
            #expect(try invoice.decode(10, as: Date.self) == Fake.day(30))
            #expect(try invoice.decode(11, as: Date.self) == Fake.day(0))
            #expect(try invoice.decode(12, as: Int64.self) == 999)
            #expect(try invoice.decode(13, as: String.self) == "USD")
            #expect(try invoice.decode(14, as: Date.self) == Fake.day(0))
            #expect(try invoice.decode(15, as: String.self) == "t1")
            #expect(try await fixture.mirrorRowCounts() == ["store_purchases": 1, "customer_subscriptions": 1,
                                                            "invoices": 1, "payments": 1, "refunds": 0,
                                                            "purchase_events": 3])
        }
    }

    @Test func theSameSnapshotAppliedFiveTimesBooksOnce() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let snapshot = Fake.snapshot(token: token, charges: [
                Fake.charge("t1", day: 0, refund: Fake.refund(day: 3)),
                Fake.charge("t2", day: 30, reason: "renewal"),
            ], asOfDay: 31)
            var outcomes: [Mirror.Outcome] = []
            for _ in 0..<5 { outcomes.append(try await fixture.apply(snapshot)) }

            #expect(outcomes.map(\.chargesBooked) == [2, 0, 0, 0, 0])
            #expect(outcomes.map(\.refundsBooked) == [1, 0, 0, 0, 0])
            #expect(outcomes.map(\.linkedNow) == [true, false, false, false, false])
            #expect(Set(outcomes.map(\.purchaseID)).count == 1)
            #expect(outcomes.allSatisfy { $0.applied })
            let counts = try await fixture.mirrorRowCounts()
            #expect(counts["store_purchases"] == 1 && counts["customer_subscriptions"] == 1)
            #expect(counts["invoices"] == 2 && counts["payments"] == 2 && counts["refunds"] == 1)
        }
    }

    @Test func concurrentAppliesOfOneNewLineageBookOnce() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            let snapshot = Fake.snapshot(token: token, charges: [Fake.charge("t1")])
            let outcomes = try await withThrowingTaskGroup(of: Mirror.Outcome.self) { group in
                for _ in 0..<4 { group.addTask { try await fixture.apply(snapshot) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.map(\.chargesBooked).reduce(0, +) == 1)
            #expect(outcomes.filter(\.linkedNow).count == 1)
            #expect(outcomes.allSatisfy { $0.customerID == customer })
            let counts = try await fixture.mirrorRowCounts()
            #expect(counts["store_purchases"] == 1 && counts["customer_subscriptions"] == 1)
            #expect(counts["invoices"] == 1 && counts["payments"] == 1)
        }
    }

    @Test func aLineageHeldByAnotherTransactionIsReportedBusyInsteadOfWaiting() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let snapshot = Fake.snapshot(token: token, charges: [Fake.charge("t1")])
            let holder = try await PostgresConnection.connect(url: database.url, applicationName: "lineage-holder")
            try await holder.query("BEGIN")
            try await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                                   ["storesync.lineage:\(fixture.connection.id):\(snapshot.lineage)"])
            do {
                _ = try await fixture.apply(snapshot)
                Issue.record("an apply of a held lineage succeeded")
            } catch let error as MirrorError {
                #expect(error.code == .lineageBusy)
            }
            #expect(try await fixture.count("SELECT count(*) FROM store_purchases") == 0)
            try await holder.query("COMMIT")
            await holder.close()
            #expect(try await fixture.apply(snapshot).chargesBooked == 1)
        }
    }

    @Test func aChargeListedTwiceInOneSnapshotIsBookedOnce() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let refunded = Fake.charge("t1", refund: Fake.refund(day: 2))
            let outcome = try await fixture.apply(Fake.snapshot(token: token, charges: [refunded, refunded, Fake.charge("t2")],
                                                                asOfDay: 3))
            #expect(outcome.chargesBooked == 2 && outcome.refundsBooked == 1)
            let counts = try await fixture.mirrorRowCounts()
            #expect(counts["invoices"] == 2 && counts["payments"] == 2 && counts["refunds"] == 1)
        }
    }

    @Test(arguments: [1, 3, 12])
    func renewalsBookOneInvoiceEach(renewals: Int) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            var history = [Fake.charge("t0")]
            try await fixture.apply(Fake.snapshot(token: token, charges: history))
            for month in 1...renewals {
                history.append(Fake.charge("t\(month)", day: 30 * month, reason: "renewal"))
                // Each answer carries the whole history so far, as a resync does.
                let outcome = try await fixture.apply(Fake.snapshot(token: token, charges: history, asOfDay: 30 * month,
                                                                    event: "DID_RENEW"))
                #expect(outcome.chargesBooked == 1)
            }
            let totals = try await fixture.rows("""
                SELECT count(*), sum(amount_minor), count(*) FILTER (WHERE customer_id = $1::uuid),
                       (SELECT count(*) FROM payments), (SELECT sum(amount_minor) FROM payments)
                FROM invoices
                """, [customer])[0]
            #expect(try totals.decode(0, as: Int.self) == renewals + 1)
            #expect(try totals.decode(1, as: Int64.self) == Int64(999 * (renewals + 1)))
            #expect(try totals.decode(2, as: Int.self) == renewals + 1)
            #expect(try totals.decode(3, as: Int.self) == renewals + 1)
            #expect(try totals.decode(4, as: Int64.self) == Int64(999 * (renewals + 1)))
            let end: Date = try await fixture.rows("SELECT current_period_end FROM customer_subscriptions")[0].decode(0)
            #expect(end == Fake.day(30 * renewals + 30))
        }
    }

    // MARK: No regressions

    @Test func anOlderSnapshotAfterANewerOneKeepsTheNewestStateButBooksItsNewCharge() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let newer = Fake.snapshot(state: .expired, autoRenew: false, token: token,
                                      charges: [Fake.charge("t2", day: 30, reason: "renewal")], asOfDay: 60,
                                      reference: "n-2", event: "EXPIRED/VOLUNTARY")
            let older = Fake.snapshot(state: .active, token: token, charges: [Fake.charge("t1", day: 0)], asOfDay: 10,
                                      reference: "n-1")
            try await fixture.apply(newer)
            let stale = try await fixture.apply(older)
            let staleAgain = try await fixture.apply(older)

            #expect(!stale.applied && stale.state == .expired && stale.previousState == .expired)
            #expect(stale.chargesBooked == 1 && staleAgain.chargesBooked == 0)
            let purchase = try await fixture.rows("""
                SELECT store_state, as_of, snapshot->>'as_of_day', expires_at FROM store_purchases
                """)[0]
            #expect(try purchase.decode(0, as: String.self) == "expired")
            #expect(try purchase.decode(1, as: Date.self) == Fake.day(60))
            #expect(try purchase.decode(2, as: String.self) == "60")
            #expect(try purchase.decode(3, as: Date.self) == Fake.day(90))
            let subscription = try await fixture.rows("""
                SELECT status, store_state, current_period_end, auto_renew FROM customer_subscriptions
                """)[0]
            #expect(try subscription.decode(0, as: String.self) == "expired")
            #expect(try subscription.decode(1, as: String.self) == "expired")
            #expect(try subscription.decode(2, as: Date.self) == Fake.day(90))
            #expect(try !subscription.decode(3, as: Bool.self))
            #expect(try await fixture.count("SELECT count(*) FROM invoices") == 2)
            #expect(try await fixture.count("SELECT count(*) FROM payments") == 2)
            #expect(try await fixture.count("SELECT count(*) FROM purchase_events WHERE kind = 'stale_snapshot_ignored'") == 2)
        }
    }

    // MARK: Linking

    @Test(arguments: [nil, "5b0c2c59-3f0e-4a55-9d53-3a8f0c7e9b11", "not-a-uuid"] as [String?])
    func anUnknownTokenLeavesThePurchaseUnlinkedButKeepsItsCharges(token: String?) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            _ = try await fixture.customerWithToken()
            let outcome = try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1")]))

            #expect(outcome.customerID == nil && !outcome.linkedNow && outcome.chargesBooked == 1)
            let purchase = try await fixture.rows("SELECT customer_id, linked_at, account_token FROM store_purchases")[0]
            #expect(purchase.text(0) == nil && purchase.text(1) == nil && purchase.text(2) == token)
            #expect(try await fixture.count("SELECT count(*) FROM customer_subscriptions") == 0)
            let invoice = try await fixture.rows("SELECT customer_id, subscription_id, amount_minor FROM invoices")[0]
            #expect(invoice.text(0) == nil && invoice.text(1) == nil)
            #expect(try invoice.decode(2, as: Int64.self) == 999)
            #expect(try await fixture.count("SELECT count(*) FROM payments") == 1)
            let pending = try await fixture.rows("SELECT detail->>'account_token' FROM purchase_events WHERE kind = 'pending_claim'")
            #expect(try pending.map { try $0.decode(0, as: String.self) } == [token == nil ? "none" : "unknown"])
        }
    }

    @Test func aLaterSnapshotWithAnIssuedTokenLinksTheLineageAndClaimsItsInvoices() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            let first = try await fixture.apply(Fake.snapshot(token: nil, charges: [Fake.charge("t1")]))
            #expect(first.customerID == nil)

            let second = try await fixture.apply(Fake.snapshot(token: token, charges: [
                Fake.charge("t1"), Fake.charge("t2", day: 30, reason: "renewal"),
            ], asOfDay: 30))
            #expect(second.linkedNow && second.customerID == customer && second.purchaseID == first.purchaseID)
            #expect(second.chargesBooked == 1)
            let subscriptionID: Int64 = try await fixture.rows("""
                SELECT id FROM customer_subscriptions WHERE customer_id = $1::uuid AND purchase_id = $2
                """, [customer, first.purchaseID])[0].decode(0)
            let invoices = try await fixture.rows("""
                SELECT store_transaction_id, customer_id::text, subscription_id FROM invoices ORDER BY store_transaction_id
                """)
            #expect(try invoices.map { try $0.decode(0, as: String.self) } == ["t1", "t2"])
            #expect(try invoices.allSatisfy { try $0.decode(1, as: String.self) == customer })
            #expect(try invoices.allSatisfy { try $0.decode(2, as: Int64.self) == subscriptionID })
            let linked = try await fixture.rows("SELECT detail->>'customer_id' FROM purchase_events WHERE kind = 'linked'")
            #expect(try linked.map { try $0.decode(0, as: String.self) } == [customer])
        }
    }

    @Test func aRevokedTokenStillLinksToItsCustomer() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            #expect(try await fixture.revoke(token))
            let outcome = try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1")]))
            #expect(outcome.linkedNow && outcome.customerID == customer)
            #expect(try await fixture.count("SELECT count(*) FROM customer_subscriptions WHERE customer_id = $1::uuid",
                                            [customer]) == 1)
        }
    }

    @Test func anUppercaseSpellingOfAnIssuedTokenLinks() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            let outcome = try await fixture.apply(Fake.snapshot(token: token.uppercased(), charges: [Fake.charge("t1")]))
            #expect(outcome.customerID == customer)
        }
    }

    @Test(arguments: [true, false])
    func aRawCustomerIDLinksOnlyWhenIssuedTokensAreNotRequired(requireIssuedTokens: Bool) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, requireIssuedTokens: requireIssuedTokens)
            let customer = try await fixture.addCustomer()
            let outcome = try await fixture.apply(Fake.snapshot(token: customer, charges: [Fake.charge("t1")]))
            #expect(outcome.customerID == (requireIssuedTokens ? nil : customer))
            #expect(outcome.linkedNow == !requireIssuedTokens)
            #expect(try await fixture.count("SELECT count(*) FROM customer_subscriptions") == (requireIssuedTokens ? 0 : 1))
            #expect(try await fixture.count("SELECT count(*) FROM invoices WHERE customer_id IS NULL")
                    == (requireIssuedTokens ? 1 : 0))
        }
    }

    @Test func tokensAndCustomersOfAnotherAccountNeverLink() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, requireIssuedTokens: false)
            let other = try await AccountFixture.make(database, requireIssuedTokens: false, host: "other.example.com")
            let (otherCustomer, otherToken) = try await other.customerWithToken()
            let byToken = try await fixture.apply(Fake.snapshot(lineage: "L1", token: otherToken))
            let byRawID = try await fixture.apply(Fake.snapshot(lineage: "L2", token: otherCustomer))
            #expect(byToken.customerID == nil && byRawID.customerID == nil)
            #expect(try await fixture.count("SELECT count(*) FROM customer_subscriptions") == 0)
        }
    }

    @Test func aLineageLinkedToOneCustomerNeverMovesToAnother() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, requireIssuedTokens: false)
            let (customerA, tokenA) = try await fixture.customerWithToken()
            let (customerB, tokenB) = try await fixture.customerWithToken()
            try await fixture.apply(Fake.snapshot(token: tokenA, charges: [Fake.charge("t1")]))
            let byTokenB = try await fixture.apply(Fake.snapshot(token: tokenB, charges: [
                Fake.charge("t1"), Fake.charge("t2", day: 30, reason: "renewal"),
            ], asOfDay: 30))
            let byRawB = try await fixture.apply(Fake.snapshot(token: customerB, charges: [
                Fake.charge("t3", day: 60, reason: "renewal"),
            ], asOfDay: 60))
            let staleB = try await fixture.apply(Fake.snapshot(token: tokenB, charges: [
                Fake.charge("t0", day: -30),
            ], asOfDay: 5))

            for outcome in [byTokenB, byRawB, staleB] {
                #expect(outcome.customerID == customerA && !outcome.linkedNow)
            }
            #expect(try await fixture.rows("SELECT customer_id::text FROM store_purchases")[0].decode(0, as: String.self)
                    == customerA)
            let subscriptions = try await fixture.rows("SELECT customer_id::text FROM customer_subscriptions")
            #expect(try subscriptions.map { try $0.decode(0, as: String.self) } == [customerA])
            #expect(try await fixture.count("SELECT count(*) FROM invoices WHERE customer_id = $1::uuid", [customerA]) == 4)
            #expect(try await fixture.count("SELECT count(*) FROM invoices WHERE customer_id IS DISTINCT FROM $1::uuid",
                                            [customerA]) == 0)
        }
    }

    // MARK: Refusals: nothing is written

    @Test func anUnmappedProductIsRefusedAndTheCallersTransactionWritesNothing() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            try await fixture.apply(Fake.snapshot(lineage: "L1", token: token, charges: [Fake.charge("t1")]))
            let before = try await fixture.mirrorRowCounts()

            let connection = fixture.connection
            let mapped = Fake.snapshot(lineage: "L2", token: token, charges: [Fake.charge("t5")])
            let upgradeToUnmapped = Fake.snapshot(lineage: "L1", product: "com.example.unmapped", state: .expired,
                                                  token: token,
                                                  charges: [Fake.charge("t2", product: "com.example.unmapped", day: 5)],
                                                  asOfDay: 5)
            let error = await #expect(throws: MirrorError.self) {
                try await database.pool.transaction { db in
                    // The job's transaction: an earlier effect in it is rolled back with the refusal.
                    _ = try Mirror.apply(mapped, connection: connection, on: db)
                    _ = try Mirror.apply(upgradeToUnmapped, connection: connection, on: db)
                }
            }
            #expect(error?.code == .productNotMapped)
            #expect(error?.message.contains("com.example.unmapped") == true)
            #expect(try await fixture.mirrorRowCounts() == before)
            #expect(try await fixture.rows("SELECT store_state FROM store_purchases")[0].decode(0, as: String.self) == "active")

            let newLineage = await #expect(throws: MirrorError.self) {
                try await fixture.apply(Fake.snapshot(lineage: "L3", product: "com.example.unmapped", token: token))
            }
            #expect(newLineage?.code == .productNotMapped)
            #expect(try await fixture.mirrorRowCounts() == before)
        }
    }

    @Test func aGoogleBasePlanMustBeMappedItself() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, store: .google)
            let (_, token) = try await fixture.customerWithToken()
            let annual = try await fixture.addPlanPrice(planCode: "pro", priceCode: "pro-annual", minorUnits: 9_999)
            try await fixture.map("com.example.pro", basePlanID: "annual", to: annual)

            let outcome = try await fixture.apply(Fake.snapshot(store: .google, product: "com.example.pro", basePlanID: "annual",
                                                                token: token))
            #expect(try await fixture.rows("SELECT plan_price_id FROM customer_subscriptions WHERE purchase_id = $1",
                                           [outcome.purchaseID])[0].decode(0, as: Int64.self) == annual)
            let error = await #expect(throws: MirrorError.self) {
                try await fixture.apply(Fake.snapshot(lineage: "L2", store: .google, product: "com.example.pro",
                                                      basePlanID: "monthly", token: token))
            }
            #expect(error?.code == .productNotMapped)
        }
    }

    @Test(arguments: [(StoreEnvironment.production, StoreEnvironment.sandbox),
                      (StoreEnvironment.sandbox, StoreEnvironment.production)])
    func environmentsNeverMix(connection: StoreEnvironment, purchase: StoreEnvironment) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, environment: connection)
            let (_, token) = try await fixture.customerWithToken()
            let error = await #expect(throws: MirrorError.self) {
                try await fixture.apply(Fake.snapshot(environment: purchase, token: token, charges: [Fake.charge("t1")]))
            }
            #expect(error?.code == .environmentMismatch)
            #expect(try await fixture.mirrorRowCounts().values.allSatisfy { $0 == 0 })

            let matching = try await fixture.apply(Fake.snapshot(environment: connection, token: token,
                                                                 charges: [Fake.charge("t1")]))
            #expect(matching.chargesBooked == 1)
            #expect(try await fixture.rows("SELECT environment FROM store_purchases")[0].decode(0, as: String.self)
                    == connection.rawValue)
        }
    }

    @Test func aSnapshotOfAnotherStoreIsRefused() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, store: .apple)
            let (_, token) = try await fixture.customerWithToken()
            let error = await #expect(throws: MirrorError.self) {
                try await fixture.apply(Fake.snapshot(store: .google, token: token, charges: [Fake.charge("t1")]))
            }
            #expect(error?.code == .storeMismatch)
            #expect(try await fixture.mirrorRowCounts().values.allSatisfy { $0 == 0 })
        }
    }

    // MARK: Refunds

    struct RefundCase: Sendable, CustomTestStringConvertible {
        let kind: String
        let charged: Money
        let refunded: Money
        var testDescription: String { "\(kind) refund of \(refunded) on \(charged)" }
    }

    @Test(arguments: [
        RefundCase(kind: "full", charged: Money(minorUnits: 999, currency: "USD"), refunded: Money(minorUnits: 999, currency: "USD")),
        RefundCase(kind: "prorated", charged: Money(minorUnits: 999, currency: "USD"),
                   refunded: Money(minorUnits: 333, currency: "USD")),
        RefundCase(kind: "prorated", charged: Money(minorUnits: 1_234, currency: "KWD"),
                   refunded: Money(minorUnits: 617, currency: "KWD")),
        RefundCase(kind: "full", charged: Money(minorUnits: 1_200, currency: "JPY"), refunded: Money(minorUnits: 1_200, currency: "JPY")),
    ])
    func aRefundIsBookedOnceWithItsExactAmount(_ refund: RefundCase) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let charge = Fake.charge("t1", minorUnits: refund.charged.minorUnits, currency: refund.charged.currency,
                                     refund: Fake.refund(minorUnits: refund.refunded.minorUnits,
                                                         currency: refund.refunded.currency, day: 4, kind: refund.kind))
            let first = try await fixture.apply(Fake.snapshot(state: .revoked, token: token, charges: [charge], asOfDay: 4,
                                                              event: "REFUND"))
            let again = try await fixture.apply(Fake.snapshot(state: .revoked, token: token, charges: [charge], asOfDay: 5,
                                                              event: "REFUND"))
            #expect(first.refundsBooked == 1 && again.refundsBooked == 0)
            let rows = try await fixture.rows("""
                SELECT r.amount_minor, r.currency, r.kind, r.reason, r.refunded_at, r.reversed_at,
                       r.invoice_id = i.id, r.payment_id = p.id, r.refunded_transaction_id, r.store
                FROM refunds r JOIN invoices i ON i.store_transaction_id = 't1' JOIN payments p ON p.invoice_id = i.id
                """)
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(try row.decode(0, as: Int64.self) == refund.refunded.minorUnits)
            #expect(try row.decode(1, as: String.self) == refund.refunded.currency)
            #expect(try row.decode(2, as: String.self) == refund.kind)
            #expect(try row.decode(3, as: String.self) == "customer request")
            #expect(try row.decode(4, as: Date.self) == Fake.day(4))
            #expect(row.text(5) == nil)
            #expect(try row.decode(6, as: Bool.self) && row.decode(7, as: Bool.self))
            #expect(try row.decode(8, as: String.self) == "t1" && row.decode(9, as: String.self) == "apple")
            #expect(try await fixture.rows("SELECT status FROM customer_subscriptions")[0].decode(0, as: String.self) == "expired")
        }
    }

    @Test func aReversedRefundKeepsItsRowAndCanBeRefundedAgain() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let refunded = Fake.charge("t1", refund: Fake.refund(day: 2))
            let plain = Fake.charge("t1")
            try await fixture.apply(Fake.snapshot(token: token, charges: [refunded], asOfDay: 2, event: "REFUND"))

            let reversal = try await fixture.apply(Fake.snapshot(token: token, charges: [plain], asOfDay: 3,
                                                                 event: "REFUND_REVERSED"))
            let reversalAgain = try await fixture.apply(Fake.snapshot(token: token, charges: [plain], asOfDay: 4))
            #expect(reversal.refundsReversed == 1 && reversalAgain.refundsReversed == 0)
            let reversed = try await fixture.rows("SELECT reversed_at, amount_minor FROM refunds")
            #expect(reversed.count == 1)
            #expect(try reversed[0].decode(0, as: Date.self) == Fake.day(3))
            #expect(try reversed[0].decode(1, as: Int64.self) == 999)

            let again = try await fixture.apply(Fake.snapshot(token: token, charges: [
                Fake.charge("t1", refund: Fake.refund(minorUnits: 500, day: 6, kind: "partial")),
            ], asOfDay: 6, event: "REFUND"))
            #expect(again.refundsBooked == 1)
            let live = try await fixture.rows("SELECT reversed_at, amount_minor, kind, refunded_at FROM refunds")
            #expect(live.count == 1)
            #expect(live[0].text(0) == nil)
            #expect(try live[0].decode(1, as: Int64.self) == 500)
            #expect(try live[0].decode(2, as: String.self) == "partial")
            #expect(try live[0].decode(3, as: Date.self) == Fake.day(6))
            let kinds = try await fixture.rows("""
                SELECT kind FROM purchase_events WHERE kind LIKE 'refund%' ORDER BY id
                """).map { try $0.decode(0, as: String.self) }
            #expect(kinds == ["refund_booked", "refund_reversed", "refund_booked"])
        }
    }

    @Test func aStaleSnapshotNeitherReversesNorRevivesARefund() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let refundedSnapshot = Fake.snapshot(token: token, charges: [Fake.charge("t1", refund: Fake.refund(day: 2))],
                                                 asOfDay: 2, event: "REFUND")
            let reversalSnapshot = Fake.snapshot(token: token, charges: [Fake.charge("t1")], asOfDay: 3,
                                                 event: "REFUND_REVERSED")
            try await fixture.apply(refundedSnapshot)
            try await fixture.apply(reversalSnapshot)
            // The refund notification delivered again, late: it is older than the reversal.
            let late = try await fixture.apply(refundedSnapshot)
            #expect(!late.applied && late.refundsBooked == 0)
            #expect(try await fixture.rows("SELECT reversed_at FROM refunds")[0].decode(0, as: Date.self) == Fake.day(3))

            // And an old answer without the refund does not reverse a live one.
            try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1", refund: Fake.refund(day: 5))],
                                                  asOfDay: 5, event: "REFUND"))
            let old = try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1")], asOfDay: 1))
            #expect(old.refundsReversed == 0)
            #expect(try await fixture.rows("SELECT reversed_at FROM refunds")[0].text(0) == nil)
        }
    }

    /// An answer is as new as its status read, but its history pages may have been read earlier: a copy of the
    /// charge signed before the refund shows none without the refund having been reversed.
    @Test func onlyACopySignedAfterTheRefundReversesIt() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1", refund: Fake.refund(day: 2))],
                                                  asOfDay: 2, event: "REFUND"))
            let early = try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1", seenDay: 1)],
                                                              asOfDay: 3))
            #expect(early.applied && early.refundsReversed == 0)
            #expect(try await fixture.rows("SELECT reversed_at FROM refunds")[0].text(0) == nil)

            let later = try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1", seenDay: 4)],
                                                              asOfDay: 4, event: "REFUND_REVERSED"))
            #expect(later.refundsReversed == 1)
            #expect(try await fixture.rows("SELECT reversed_at FROM refunds")[0].decode(0, as: Date.self) == Fake.day(4))
        }
    }

    /// A refund fetched before its reversal, applied after a newer answer that already shows the charge
    /// unrefunded (no refund row existed yet): where refunds are reversible (Apple, whose newer answers re-list
    /// refund changes), the stale one is not booked; where refunds are final (Google), it is.
    @Test(arguments: [true, false])
    func aRefundOnlyAStaleAnswerShowsIsBookedOnlyWhereRefundsAreFinal(reversible: Bool) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let reversed = try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1")], asOfDay: 3,
                                                                 event: "REFUND_REVERSED", refundsReversible: reversible))
            let stale = try await fixture.apply(Fake.snapshot(token: token, charges: [
                Fake.charge("t1", refund: Fake.refund(day: 2)), Fake.charge("t0", day: -30, reason: "renewal"),
            ], asOfDay: 2, event: "REFUND", refundsReversible: reversible))

            #expect(reversed.chargesBooked == 1 && !stale.applied)
            #expect(stale.chargesBooked == 1, "the stale answer's new charge is booked either way")
            #expect(stale.refundsBooked == (reversible ? 0 : 1))
            #expect(stale.staleRefunds == (reversible ? 1 : 0), "the caller has a fresh read decide what it skipped")
            #expect(reversed.staleRefunds == 0)
            #expect(try await fixture.count("SELECT count(*) FROM refunds") == (reversible ? 0 : 1))

            // A stale answer showing a refund the mirror holds live at that amount leaves nothing to decide.
            try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t2", refund: Fake.refund(day: 5))],
                                                  asOfDay: 5, event: "REFUND", refundsReversible: reversible))
            let late = try await fixture.apply(Fake.snapshot(token: token, charges: [
                Fake.charge("t2", refund: Fake.refund(day: 5)),
            ], asOfDay: 4, event: "REFUND", refundsReversible: reversible))
            #expect(!late.applied && late.staleRefunds == 0)
        }
    }

    /// A charge refunded in parts: the store's later answer shows more refunded (the rest after a partial
    /// refund), and the live refund grows to it, kind and all. Refunds only grow, so an answer showing less —
    /// older, or fresh but behind — never lowers it.
    @Test(arguments: [Store.apple, .google])
    func aLiveRefundGrowsToTheLargerAmountAndNeverShrinks(store: Store) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, store: store)
            let (_, token) = try await fixture.customerWithToken()
            func refunded(_ minorUnits: Int64, day: Int, kind: String, reason: String?) -> StoreCharge {
                Fake.charge("t1", refund: Fake.refund(minorUnits: minorUnits, day: day, kind: kind, reason: reason))
            }
            let partial = try await fixture.apply(Fake.snapshot(store: store, token: token, charges: [
                refunded(300, day: 2, kind: store == .apple ? "prorated" : "partial", reason: "customer request"),
            ], asOfDay: 2, event: "REFUND"))
            let rest = try await fixture.apply(Fake.snapshot(store: store, token: token, charges: [
                refunded(999, day: 5, kind: "full", reason: nil),
            ], asOfDay: 5, event: "REFUND"))
            let again = try await fixture.apply(Fake.snapshot(store: store, token: token, charges: [
                refunded(999, day: 5, kind: "full", reason: nil),
            ], asOfDay: 6))
            #expect(partial.refundsBooked == 1 && rest.refundsBooked == 1 && again.refundsBooked == 0)

            let behind = try await fixture.apply(Fake.snapshot(store: store, token: token, charges: [
                refunded(300, day: 2, kind: "partial", reason: "late copy"),
            ], asOfDay: 7))
            let older = try await fixture.apply(Fake.snapshot(store: store, token: token, charges: [
                refunded(300, day: 2, kind: "partial", reason: "late copy"),
            ], asOfDay: 3))
            #expect(behind.refundsBooked == 0 && older.refundsBooked == 0 && !older.applied)

            let rows = try await fixture.rows("SELECT amount_minor, kind, refunded_at, reason, reversed_at FROM refunds")
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(try row.decode(0, as: Int64.self) == 999)
            #expect(try row.decode(1, as: String.self) == "full")
            #expect(try row.decode(2, as: Date.self) == Fake.day(5))
            #expect(try row.decode(3, as: String.self) == "customer request", "an answer without a reason keeps the known one")
            #expect(row.text(4) == nil)
            let kinds = try await fixture.rows("""
                SELECT kind FROM purchase_events WHERE kind LIKE 'refund%' ORDER BY id
                """).map { try $0.decode(0, as: String.self) }
            #expect(kinds == ["refund_booked", "refund_booked"])
        }
    }

    /// A refund booked from what only one answer said (Google: the voided record, while the order itself
    /// showed no refund yet): a later, fresh answer showing the charge unrefunded reverses it only where the
    /// store can reverse refunds (Apple's `REFUND_REVERSED`); Google's refunds are final.
    @Test(arguments: [Store.apple, .google])
    func aChargeShownUnrefundedReversesItsRefundOnlyWhereRefundsAreReversible(store: Store) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, store: store)
            let (_, token) = try await fixture.customerWithToken()
            try await fixture.apply(Fake.snapshot(store: store, token: token, charges: [
                Fake.charge("t1", refund: Fake.refund(day: 2)),
            ], asOfDay: 2, event: "REFUND"))
            let resync = try await fixture.apply(Fake.snapshot(store: store, token: token, charges: [Fake.charge("t1")],
                                                               asOfDay: 3, reference: "resync", event: "RESYNC"))
            #expect(resync.applied)
            #expect(resync.refundsReversed == (store == .apple ? 1 : 0))
            let reversedAt = try await fixture.rows("SELECT reversed_at FROM refunds")[0].text(0)
            #expect((reversedAt != nil) == (store == .apple))
        }
    }

    // MARK: Ownership, upgrades, timeline, status and money

    @Test func familySharedAccessIsMirroredButNeverBooked() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            let outcome = try await fixture.apply(Fake.snapshot(ownership: .familyShared, token: token, charges: [
                Fake.charge("t1"), Fake.charge("t2", day: 30, refund: Fake.refund(day: 31)),
            ], asOfDay: 31))
            #expect(outcome.customerID == customer && outcome.chargesBooked == 0 && outcome.refundsBooked == 0)
            #expect(try await fixture.rows("SELECT ownership FROM store_purchases")[0].decode(0, as: String.self)
                    == "family_shared")
            let counts = try await fixture.mirrorRowCounts()
            #expect(counts["customer_subscriptions"] == 1)
            #expect(counts["invoices"] == 0 && counts["payments"] == 0 && counts["refunds"] == 0)
        }
    }

    @Test func anUpgradeMovesTheSubscriptionToTheMappedPlanPriceWithoutDoubleBooking() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            let premium = try await fixture.addPlanPrice(planCode: "premium", priceCode: "premium-monthly", minorUnits: 1_999)
            try await fixture.map("com.example.premium.monthly", to: premium)
            try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1")]))
            let subscriptionBefore: Int64 = try await fixture.rows("SELECT id FROM customer_subscriptions")[0].decode(0)

            let upgrade = Fake.snapshot(product: "com.example.premium.monthly", token: token, charges: [
                Fake.charge("t1"),
                Fake.charge("t2", product: "com.example.premium.monthly", minorUnits: 1_999, day: 10, reason: "upgrade"),
            ], asOfDay: 10, event: "DID_CHANGE_RENEWAL_PREF/UPGRADE")
            let outcome = try await fixture.apply(upgrade)
            try await fixture.apply(upgrade)
            #expect(outcome.chargesBooked == 1)

            let subscription = try await fixture.rows("SELECT id, plan_price_id FROM customer_subscriptions")
            #expect(subscription.count == 1)
            #expect(try subscription[0].decode(0, as: Int64.self) == subscriptionBefore)
            #expect(try subscription[0].decode(1, as: Int64.self) == premium)
            let invoices = try await fixture.rows("""
                SELECT store_transaction_id, store_product_id, amount_minor, description FROM invoices ORDER BY id
                """)
            #expect(try invoices.map { try $0.decode(0, as: String.self) } == ["t1", "t2"])
            #expect(try invoices[1].decode(1, as: String.self) == "com.example.premium.monthly")
            #expect(try invoices[1].decode(2, as: Int64.self) == 1_999)
            #expect(try invoices[1].decode(3, as: String.self) == "upgrade com.example.premium.monthly")
            #expect(try await fixture.count("SELECT count(*) FROM payments") == 2)
        }
    }

    @Test func theTimelineRecordsWhatHappenedAndWhereItCameFrom() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            let first = try await fixture.apply(Fake.snapshot(token: token, charges: [Fake.charge("t1")],
                                                              reference: "uuid-1", event: "SUBSCRIBED/INITIAL_BUY"))
            try await fixture.apply(Fake.snapshot(state: .expired, autoRenew: false, token: token, charges: [Fake.charge("t1")],
                                                  asOfDay: 40, reference: "uuid-2", event: "EXPIRED/VOLUNTARY"))
            try await fixture.apply(Fake.snapshot(token: token, asOfDay: 1, reference: "uuid-0", event: "DID_RENEW"))

            let events = try await fixture.rows("""
                SELECT purchase_id, kind, source, reference, store_event, detail::text FROM purchase_events ORDER BY id
                """)
            #expect(try events.allSatisfy { try $0.decode(0, as: Int64.self) == first.purchaseID })
            #expect(try events.allSatisfy { try $0.decode(2, as: String.self) == "notification" })
            let summary = try events.map {
                try [$0.decode(1, as: String.self), $0.decode(3, as: String.self), $0.decode(4, as: String.self)]
            }
            #expect(summary == [
                ["state_changed", "uuid-1", "SUBSCRIBED/INITIAL_BUY"],
                ["linked", "uuid-1", "SUBSCRIBED/INITIAL_BUY"],
                ["charge_booked", "uuid-1", "SUBSCRIBED/INITIAL_BUY"],
                ["state_changed", "uuid-2", "EXPIRED/VOLUNTARY"],
                ["stale_snapshot_ignored", "uuid-0", "DID_RENEW"],
            ])
            let details = try await fixture.rows("""
                SELECT detail->>'state', detail->>'previous_state', detail->>'customer_id', detail->>'transaction_id',
                       detail->>'auto_renew'
                FROM purchase_events ORDER BY id
                """)
            #expect(details[0].text(0) == "active" && details[0].text(1) == nil && details[0].text(4) == "true")
            #expect(details[1].text(2) == customer)
            #expect(details[2].text(3) == "t1")
            #expect(details[3].text(0) == "expired" && details[3].text(1) == "active" && details[3].text(4) == "false")
            #expect(details[4].text(0) == "active")
        }
    }

    struct StatusCase: Sendable, CustomTestStringConvertible {
        let state: StoreState
        let autoRenew: Bool
        let inFreeTrial: Bool
        let status: String
        let cancelled: Bool
        var testDescription: String { "\(state.rawValue), auto-renew \(autoRenew), trial \(inFreeTrial) → \(status)" }
    }

    @Test(arguments: [
        StatusCase(state: .active, autoRenew: true, inFreeTrial: true, status: "trial", cancelled: false),
        StatusCase(state: .active, autoRenew: true, inFreeTrial: false, status: "active", cancelled: false),
        StatusCase(state: .active, autoRenew: false, inFreeTrial: false, status: "cancelled", cancelled: true),
        StatusCase(state: .grace, autoRenew: true, inFreeTrial: false, status: "active", cancelled: false),
        StatusCase(state: .onHold, autoRenew: true, inFreeTrial: false, status: "active", cancelled: false),
        StatusCase(state: .expired, autoRenew: false, inFreeTrial: false, status: "expired", cancelled: false),
        StatusCase(state: .revoked, autoRenew: true, inFreeTrial: false, status: "expired", cancelled: false),
    ])
    func theStatusColumnFollowsTheSnapshot(_ rule: StatusCase) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            // First active, then the case's state: the update path, not only the insert, sets the status.
            try await fixture.apply(Fake.snapshot(token: token))
            try await fixture.apply(Fake.snapshot(state: rule.state, autoRenew: rule.autoRenew, inFreeTrial: rule.inFreeTrial,
                                                  token: token, asOfDay: 2))
            let row = try await fixture.rows("""
                SELECT s.status, s.store_state, s.auto_renew, s.cancelled_at, p.store_state
                FROM customer_subscriptions s JOIN store_purchases p ON p.id = s.purchase_id
                """)[0]
            #expect(try row.decode(0, as: String.self) == rule.status)
            #expect(try row.decode(1, as: String.self) == rule.state.rawValue)
            #expect(try row.decode(2, as: Bool.self) == rule.autoRenew)
            #expect(try row.decodeOptional(3, as: Date.self) == (rule.cancelled ? Fake.day(32) : nil))
            #expect(try row.decode(4, as: String.self) == rule.state.rawValue)
        }
    }

    @Test(arguments: [
        Money(minorUnits: 999, currency: "USD"),
        Money(minorUnits: 1_200, currency: "JPY"),
        Money(minorUnits: 1_234, currency: "KWD"),
        Money(minorUnits: 0, currency: "EUR"),
        Money(minorUnits: 9_007_199_254_740_993, currency: "USD"),
    ])
    func moneyIsStoredInExactMinorUnits(_ amount: Money) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (_, token) = try await fixture.customerWithToken()
            try await fixture.apply(Fake.snapshot(token: token, charges: [
                Fake.charge("t1", minorUnits: amount.minorUnits, currency: amount.currency),
            ]))
            let row = try await fixture.rows("""
                SELECT i.amount_minor, i.currency, p.amount_minor, p.currency FROM invoices i JOIN payments p ON p.invoice_id = i.id
                """)[0]
            #expect(try Money(minorUnits: row.decode(0), currency: row.decode(1)) == amount)
            #expect(try Money(minorUnits: row.decode(2), currency: row.decode(3)) == amount)
        }
    }
}
