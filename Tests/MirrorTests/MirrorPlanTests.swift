import Foundation
@testable import Mirror
import StoreModel
import TestSupport
import Testing

/// The rules of `Mirror.apply` as tables over plain values, no database: no regressions (a stale snapshot never
/// overwrites newer state and only books new charges), linking is forever, and refund reversal. `MirrorApplyTests`
/// shows the same rules hold through the real statements.
@Suite struct MirrorPlanTests {
    static let purchaseID: Int64 = 7
    static let planPriceID: Int64 = 42

    /// What the database knew under the lineage lock; `asOfDay` nil is a lineage the mirror has not seen.
    static func known(asOfDay: Int? = 5, state: StoreState = .active, customerID: String? = nil,
                      token: Linking.TokenMatch = .none, tokenReplaced: Bool = false, succeedsCurrentToken: Bool = false,
                      refundsToReverse: Bool = false, refundsNotHeld: Int = 0, planPriceID: Int64? = planPriceID) -> KnownState {
        KnownState(planPriceID: planPriceID, purchaseID: asOfDay == nil ? nil : purchaseID,
                   customerID: asOfDay == nil ? nil : customerID, asOf: asOfDay.map(Fake.day),
                   state: asOfDay == nil ? nil : state, token: token, tokenReplaced: tokenReplaced,
                   succeedsCurrentToken: succeedsCurrentToken, refundsToReverse: refundsToReverse,
                   refundsNotHeld: refundsNotHeld)
    }

    static func plan(_ snapshot: StoreSnapshot, _ known: KnownState, requireIssuedTokens: Bool = true) throws -> MirrorPlan {
        try MirrorPlan(snapshot, known: known, connectionID: 3, requireIssuedTokens: requireIssuedTokens)
    }

    // MARK: Invariant 4: no regressions

    struct FreshnessCase: Sendable, CustomTestStringConvertible {
        /// The mirror's `asOf` day, nil for a new lineage.
        let knownDay: Int?
        let snapshotDay: Int
        var tokenReplaced = false
        var succeedsCurrentToken = false
        let fresh: Bool

        var testDescription: String {
            "mirror at \(knownDay.map { "day \($0)" } ?? "nothing"), snapshot of day \(snapshotDay)"
                + (tokenReplaced ? ", its token replaced" : "") + (succeedsCurrentToken ? ", succeeding the current token" : "")
                + " → \(fresh ? "fresh" : "stale")"
        }
    }

    static let freshness: [FreshnessCase] = [
        FreshnessCase(knownDay: nil, snapshotDay: 0, fresh: true),
        FreshnessCase(knownDay: 5, snapshotDay: 8, fresh: true),
        // The same moment is no regression: a replayed answer refreshes.
        FreshnessCase(knownDay: 5, snapshotDay: 5, fresh: true),
        FreshnessCase(knownDay: 5, snapshotDay: 3, fresh: false),
        // A token that replaced the mirror's current one speaks for the lineage, however old its snapshot.
        FreshnessCase(knownDay: 5, snapshotDay: 3, succeedsCurrentToken: true, fresh: true),
        // A replaced token never does, however new its snapshot.
        FreshnessCase(knownDay: 5, snapshotDay: 8, tokenReplaced: true, fresh: false),
        FreshnessCase(knownDay: 5, snapshotDay: 3, tokenReplaced: true, succeedsCurrentToken: true, fresh: false),
        FreshnessCase(knownDay: nil, snapshotDay: 0, tokenReplaced: true, fresh: false),
    ]

    @Test(arguments: freshness)
    func aStaleSnapshotNeverOverwritesNewerStateButBooksItsCharges(_ rule: FreshnessCase) throws {
        let charge = Fake.charge("t-new", day: rule.snapshotDay)
        let snapshot = Fake.snapshot(state: .expired, token: nil, charges: [charge], asOfDay: rule.snapshotDay)
        let plan = try Self.plan(snapshot, Self.known(asOfDay: rule.knownDay, state: .active, customerID: "A",
                                                      token: .issued(customerID: "A"), tokenReplaced: rule.tokenReplaced,
                                                      succeedsCurrentToken: rule.succeedsCurrentToken))
        let mirrored = Records.MirroredState(snapshot, planPriceID: Self.planPriceID)

        #expect(plan.fresh == rule.fresh)
        #expect(plan.purchase == (rule.knownDay == nil ? .insert : rule.fresh ? .overwrite(purchaseID: Self.purchaseID)
                                                                            : .keep(purchaseID: Self.purchaseID)))
        #expect(plan.subscription == (rule.fresh ? .overwrite(mirrored) : .createMissing(fallback: mirrored)))
        // The state the mirror holds afterwards: the snapshot's only when fresh (or when there was none).
        #expect(plan.state == (rule.fresh || rule.knownDay == nil ? .expired : .active))
        #expect(plan.previousState == (rule.knownDay == nil ? nil : .active))
        #expect(plan.timeline.events.first?.kind == (rule.fresh ? "state_changed" : "stale_snapshot_ignored"))
        // New charges count whatever the answer's age; the unique keys keep the old ones from booking twice.
        #expect(plan.bookings.charges == [charge])
    }

    @Test func aFreshSnapshotOfTheSameStateRefreshesAndTheTimelineSaysWhatChanged() throws {
        let snapshot = Fake.snapshot(state: .active, token: nil, asOfDay: 8)
        let plan = try Self.plan(snapshot, Self.known(state: .active))
        #expect(plan.timeline.events == [Timeline.Event(kind: "refreshed", detail: [
            "state": "active", "previous_state": "active", "product": AccountFixture.product,
            "expires_at": Timeline.timestamp(Fake.day(38)), "auto_renew": "true",
        ])])
        let stale = try Self.plan(Fake.snapshot(state: .expired, token: nil, asOfDay: 3), Self.known(state: .active))
        #expect(stale.timeline.events == [Timeline.Event(kind: "stale_snapshot_ignored", detail: [
            "as_of": Timeline.timestamp(Fake.day(3)), "state": "expired",
        ])])
    }

    @Test func aChargeListedTwiceIsPlannedOnceAsFirstListed() throws {
        let first = Fake.charge("t1", minorUnits: 999)
        let again = Fake.charge("t1", minorUnits: 1)
        let plan = try Self.plan(Fake.snapshot(token: nil, charges: [first, Fake.charge("t2"), again]), Self.known(asOfDay: nil))
        #expect(plan.bookings.charges.map(\.transactionID) == ["t1", "t2"])
        #expect(plan.bookings.charges.first?.amount.minorUnits == 999)
    }

    @Test(arguments: [nil, "pro-annual"] as [String?])
    func anUnmappedProductIsRefusedBeforeAnythingIsPlanned(basePlanID: String?) {
        let snapshot = Fake.snapshot(store: .google, basePlanID: basePlanID, token: nil)
        #expect(throws: MirrorError(.productNotMapped, "product \(AccountFixture.product)"
                                        + (basePlanID.map { " base plan \($0)" } ?? "") + " is not mapped on connection 3")) {
            try Self.plan(snapshot, Self.known(planPriceID: nil))
        }
    }

    // MARK: Invariant 5: linking is forever

    struct LinkCase: Sendable, CustomTestStringConvertible {
        /// Whether the mirror holds the lineage already, and the customer it is linked to.
        let known: Bool
        var linkedTo: String?
        let token: Linking.TokenMatch
        var requireIssuedTokens = true
        let fresh: Bool
        let customer: String?
        let linkedNow: Bool
        let purchase: MirrorPlan.PurchaseWrite
        /// The timeline's events after the state event.
        let events: [String]

        var testDescription: String {
            (known ? "lineage linked to \(linkedTo ?? "nobody")" : "new lineage")
                + ", token \(token)\(requireIssuedTokens ? "" : " (raw ids allowed)"), \(fresh ? "fresh" : "stale") → "
                + (customer.map { linkedNow ? "links \($0)" : "keeps \($0)" } ?? "unlinked")
        }
    }

    static let links: [LinkCase] = [
        LinkCase(known: false, token: .none, fresh: true, customer: nil, linkedNow: false, purchase: .insert,
                 events: ["pending_claim"]),
        LinkCase(known: false, token: .unknown, fresh: true, customer: nil, linkedNow: false, purchase: .insert,
                 events: ["pending_claim"]),
        LinkCase(known: false, token: .issued(customerID: "B"), fresh: true, customer: "B", linkedNow: true,
                 purchase: .insert, events: ["linked"]),
        LinkCase(known: false, token: .rawCustomerID(customerID: "B"), fresh: true, customer: nil, linkedNow: false,
                 purchase: .insert, events: ["pending_claim"]),
        LinkCase(known: false, token: .rawCustomerID(customerID: "B"), requireIssuedTokens: false, fresh: true,
                 customer: "B", linkedNow: true, purchase: .insert, events: ["linked"]),
        // An unlinked lineage links on its first token, even from a stale snapshot: the link is all that writes.
        LinkCase(known: true, token: .issued(customerID: "B"), fresh: false, customer: "B", linkedNow: true,
                 purchase: .link(purchaseID: purchaseID), events: ["linked"]),
        LinkCase(known: true, token: .issued(customerID: "B"), fresh: true, customer: "B", linkedNow: true,
                 purchase: .overwrite(purchaseID: purchaseID), events: ["linked"]),
        LinkCase(known: true, token: .rawCustomerID(customerID: "B"), fresh: false, customer: nil, linkedNow: false,
                 purchase: .keep(purchaseID: purchaseID), events: []),
        LinkCase(known: true, token: .rawCustomerID(customerID: "B"), requireIssuedTokens: false, fresh: false,
                 customer: "B", linkedNow: true, purchase: .link(purchaseID: purchaseID), events: ["linked"]),
        LinkCase(known: true, token: .unknown, fresh: true, customer: nil, linkedNow: false,
                 purchase: .overwrite(purchaseID: purchaseID), events: []),
        // Linked to A: another customer's token never moves it, fresh or stale.
        LinkCase(known: true, linkedTo: "A", token: .issued(customerID: "B"), fresh: true, customer: "A", linkedNow: false,
                 purchase: .overwrite(purchaseID: purchaseID), events: []),
        LinkCase(known: true, linkedTo: "A", token: .issued(customerID: "B"), fresh: false, customer: "A", linkedNow: false,
                 purchase: .keep(purchaseID: purchaseID), events: []),
        LinkCase(known: true, linkedTo: "A", token: .rawCustomerID(customerID: "B"), requireIssuedTokens: false,
                 fresh: false, customer: "A", linkedNow: false, purchase: .keep(purchaseID: purchaseID), events: []),
        LinkCase(known: true, linkedTo: "A", token: .none, fresh: true, customer: "A", linkedNow: false,
                 purchase: .overwrite(purchaseID: purchaseID), events: []),
    ]

    @Test(arguments: links)
    func aLineageLinksOnceAndNeverMoves(_ rule: LinkCase) throws {
        let token: String? = rule.token == .none ? nil : "a-token"
        let snapshot = Fake.snapshot(token: token, asOfDay: rule.fresh ? 8 : 3)
        let plan = try Self.plan(snapshot, Self.known(asOfDay: rule.known ? 5 : nil, customerID: rule.linkedTo,
                                                      token: rule.token),
                                 requireIssuedTokens: rule.requireIssuedTokens)
        #expect(plan.fresh == rule.fresh)
        #expect(plan.customerID == rule.customer)
        #expect(plan.linkedNow == rule.linkedNow)
        #expect(plan.purchase == rule.purchase)
        #expect(Array(plan.timeline.events.dropFirst().map(\.kind)) == rule.events)
        // A pending claim has no subscription; a linked purchase has one, overwritten only by a fresh snapshot.
        let mirrored = Records.MirroredState(snapshot, planPriceID: Self.planPriceID)
        let subscription: MirrorPlan.SubscriptionWrite = rule.fresh ? .overwrite(mirrored) : .createMissing(fallback: mirrored)
        #expect(plan.subscription == (rule.customer == nil ? nil : subscription))
        if let customer = rule.customer, rule.linkedNow {
            #expect(plan.timeline.events.last == Timeline.Event(kind: "linked", detail: ["customer_id": customer]))
        }
    }

    @Test(arguments: [(nil, "none"), ("a-token", "unknown")] as [(String?, String)])
    func aPendingClaimSaysWhetherThePurchaseHadAToken(token: String?, detail: String) throws {
        let plan = try Self.plan(Fake.snapshot(token: token), Self.known(asOfDay: nil, token: token == nil ? .none : .unknown))
        #expect(plan.timeline.events.last == Timeline.Event(kind: "pending_claim", detail: ["account_token": detail]))
    }

    // MARK: Refund reversal

    struct RefundCase: Sendable, CustomTestStringConvertible {
        let fresh: Bool
        var reversible = true
        var familyShared = false
        /// The answer shows the charge refunded.
        let refunded: Bool
        /// The database found a live refund the answer shows unrefunded, in a copy signed after it.
        var refundsToReverse = false
        /// The database holds the answer's refunds short of this many.
        var refundsNotHeld = 0
        let booksRefund: Bool
        let reverses: Bool
        var staleRefunds = 0

        var testDescription: String {
            "\(fresh ? "fresh" : "stale") \(reversible ? "reversible" : "final")\(familyShared ? " family-shared" : "") answer, "
                + (refunded ? "charge refunded (\(refundsNotHeld) not held)" : "charge unrefunded")
                + (refundsToReverse ? ", mirror holds a live refund" : "")
        }
    }

    static let refunds: [RefundCase] = [
        // A fresh, reversible answer without the refund the mirror holds live reverses it …
        RefundCase(fresh: true, refunded: false, refundsToReverse: true, booksRefund: false, reverses: true),
        RefundCase(fresh: true, refunded: false, booksRefund: false, reverses: false),
        // … a stale one neither reverses it nor revives one …
        RefundCase(fresh: false, refunded: false, refundsToReverse: true, booksRefund: false, reverses: false),
        // … nor books a refund it shows: what the mirror does not hold is left to a fresh read.
        RefundCase(fresh: false, refunded: true, refundsNotHeld: 1, booksRefund: false, reverses: false, staleRefunds: 1),
        RefundCase(fresh: false, refunded: true, booksRefund: false, reverses: false),
        RefundCase(fresh: true, refunded: true, refundsNotHeld: 1, booksRefund: true, reverses: false),
        // Where refunds are final (Google), any answer books them and none reverses one.
        RefundCase(fresh: false, reversible: false, refunded: true, refundsNotHeld: 1, booksRefund: true, reverses: false),
        RefundCase(fresh: true, reversible: false, refunded: false, refundsToReverse: true, booksRefund: false,
                   reverses: false),
        // Family-shared access books nothing at all, and leaves nothing to a fresh read.
        RefundCase(fresh: true, familyShared: true, refunded: false, refundsToReverse: true, booksRefund: false,
                   reverses: false),
        RefundCase(fresh: true, familyShared: true, refunded: true, refundsNotHeld: 1, booksRefund: false, reverses: false),
        RefundCase(fresh: false, familyShared: true, refunded: true, refundsNotHeld: 1, booksRefund: false, reverses: false),
    ]

    @Test(arguments: refunds)
    func refundsAreBookedOrReversedOnlyByAnAnswerThatCanTell(_ rule: RefundCase) throws {
        let charge = Fake.charge("t1", refund: rule.refunded ? Fake.refund(day: 2) : nil, seenDay: 2)
        let snapshot = Fake.snapshot(ownership: rule.familyShared ? .familyShared : .purchased, token: nil,
                                     charges: [charge], asOfDay: rule.fresh ? 8 : 3, refundsReversible: rule.reversible)
        let plan = try Self.plan(snapshot, Self.known(refundsToReverse: rule.refundsToReverse,
                                                      refundsNotHeld: rule.refundsNotHeld))
        #expect(plan.fresh == rule.fresh)
        #expect(plan.bookings.charges == (rule.familyShared ? [] : [charge]))
        #expect(plan.bookings.refunds == (rule.booksRefund ? [StoreRefundUpdate.Refund(transactionID: "t1",
                                                                                     refund: Fake.refund(day: 2))] : []))
        #expect(plan.bookings.reversals == (rule.reverses ? [charge] : []))
        #expect(plan.staleRefunds == rule.staleRefunds)
    }

    @Test func theOutcomeCountsWhatTheWritesFound() throws {
        let plan = try Self.plan(Fake.snapshot(state: .expired, token: nil, asOfDay: 3),
                                 Self.known(refundsNotHeld: 2))
        let booked = Booking.Result(charges: ["t1", "t2"], refunds: [], reversals: [])
        #expect(plan.outcome(purchaseID: 9, booked: booked) == Mirror.Outcome(
            purchaseID: 9, applied: false, customerID: nil, linkedNow: false, previousState: .active, state: .active,
            chargesBooked: 2, refundsBooked: 0, refundsReversed: 0, staleRefunds: 2, tokenAcknowledged: false))
    }

    // MARK: Purchase tokens

    @Test(arguments: [
        (nil, [], []),
        ("c", [], [PurchaseTokens.Link(token: "c", replacedBy: nil)]),
        ("c", ["a", "b"], [PurchaseTokens.Link(token: "a", replacedBy: "b"), PurchaseTokens.Link(token: "b", replacedBy: "c"),
                           PurchaseTokens.Link(token: "c", replacedBy: nil)]),
    ] as [(String?, [String], [PurchaseTokens.Link])])
    func eachTokenIsRecordedWithTheOneThatReplacedIt(current: String?, replaced: [String], chain: [PurchaseTokens.Link]) {
        var snapshot = Fake.snapshot(store: .google, token: nil)
        snapshot.purchaseToken = current
        snapshot.replacedTokens = replaced
        #expect(PurchaseTokens.chain(of: snapshot) == chain)
    }

    /// A token recorded already that replaced none — every renewal's — is not written again; one that replaced
    /// others records the whole chain, and an unrecorded one is recorded.
    @Test(arguments: [
        (["a"], true, [PurchaseTokens.Link(token: "a", replacedBy: "b"), PurchaseTokens.Link(token: "b", replacedBy: nil)]),
        (["a"], false, [PurchaseTokens.Link(token: "a", replacedBy: "b"), PurchaseTokens.Link(token: "b", replacedBy: nil)]),
        ([], true, []),
        ([], false, [PurchaseTokens.Link(token: "b", replacedBy: nil)]),
    ] as [([String], Bool, [PurchaseTokens.Link])])
    func onlyTokensTheMirrorLacksAreWritten(replaced: [String], recorded: Bool, written: [PurchaseTokens.Link]) throws {
        var snapshot = Fake.snapshot(store: .google, token: nil)
        snapshot.purchaseToken = "b"
        snapshot.replacedTokens = replaced
        var known = Self.known()
        known.tokenRecorded = recorded
        #expect(try Self.plan(snapshot, known).tokens == written)
    }

    // MARK: Refund-only updates

    struct RefundOnlyCase: Sendable, CustomTestStringConvertible {
        let purchaseID: Int64?
        let unbooked: [String]
        let error: MirrorError.Code?

        var testDescription: String {
            (purchaseID == nil ? "no purchase" : "purchase") + ", unbooked \(unbooked) → \(error.map(\.description) ?? "books")"
        }
    }

    @Test(arguments: [
        RefundOnlyCase(purchaseID: 7, unbooked: [], error: nil),
        RefundOnlyCase(purchaseID: 7, unbooked: ["t2"], error: .chargeNotBooked),
        RefundOnlyCase(purchaseID: nil, unbooked: ["t1", "t2"], error: .unknownPurchase),
    ])
    func aRefundOnlyUpdateBooksOnlyOnAPurchaseWithEveryChargeBooked(_ rule: RefundOnlyCase) throws {
        let refunds = ["t1", "t2"].map { StoreRefundUpdate.Refund(transactionID: $0, refund: Fake.refund(day: 2)) }
        let update = StoreRefundUpdate(store: .google, lineage: "lineage-1", refunds: refunds, asOf: Fake.day(3),
                                       source: SnapshotSource(kind: "notification", reference: nil, event: "VOIDED"))
        func plan() throws -> RefundPlan {
            try RefundPlan(update, purchaseID: rule.purchaseID, state: rule.purchaseID == nil ? nil : .expired,
                           unbookedCharges: rule.unbooked, connectionID: 3)
        }
        if let code = rule.error {
            let error = #expect(throws: MirrorError.self) { try plan() }
            #expect(error?.code == code)
        } else {
            let planned = try plan()
            #expect(planned.purchaseID == 7)
            #expect(planned.state == .expired)
            #expect(planned.refunds == refunds)
        }
    }
}
