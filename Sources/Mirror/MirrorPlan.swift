import Foundation
import StoreModel

/// What applying one snapshot does, decided from plain values — the snapshot, what the database knew under
/// the lineage lock (`KnownState`) and the connection's token policy — before anything is written. Every rule
/// of `Mirror.apply` lives here, so the rules are tested as tables without a database (`MirrorPlanTests`);
/// `Mirror.apply` only reads, plans and writes. What only the writes can tell (which charges, refunds and
/// replaced tokens were new) the executor learns from the database and adds to the timeline and the outcome.
struct MirrorPlan: Equatable {
    /// How the lineage's purchase row changes.
    enum PurchaseWrite: Equatable {
        /// The lineage is new: its row is inserted, linked or not.
        case insert
        /// The snapshot speaks for the lineage now: the row takes its state (and a first link).
        case overwrite(purchaseID: Int64)
        /// A stale snapshot links the lineage for the first time: the link is all it writes.
        case link(purchaseID: Int64)
        /// A stale snapshot of a lineage whose link it does not change: the row stays as it is.
        case keep(purchaseID: Int64)
    }

    /// How the customer subscription of a linked purchase changes.
    enum SubscriptionWrite: Equatable {
        /// The snapshot's state overwrites the subscription's, or creates it.
        case overwrite(Records.MirroredState)
        /// Only a missing subscription is created, from the newest state the purchase row holds — a stale
        /// snapshot must not set it — or, where the row's product maps to no plan price, from `fallback`.
        case createMissing(fallback: Records.MirroredState)
    }

    /// The charges and refunds to book, and the refunds to reverse.
    struct Bookings: Equatable {
        /// Each charge once, as first listed: an answer may list one twice (overlapping history pages).
        var charges: [StoreCharge] = []
        var refunds: [StoreRefundUpdate.Refund] = []
        /// Charges a fresh answer shows without the live refund the mirror holds: the store reversed it.
        var reversals: [StoreCharge] = []
    }

    let purchase: PurchaseWrite
    let customerID: String?
    /// The purchase links to `customerID` now, for good.
    let linkedNow: Bool
    /// The snapshot speaks for the lineage's newest state; a stale one only books new charges (and a first link).
    let fresh: Bool
    /// Nil while the purchase is unlinked: a pending claim has no customer subscription.
    let subscription: SubscriptionWrite?
    let bookings: Bookings
    let tokens: [PurchaseTokens.Link]
    /// The events decided before the writes; the executor adds what they find.
    let timeline: Timeline
    let previousState: StoreState?
    /// The state the mirror holds afterwards.
    let state: StoreState
    /// Refunds of a stale answer left to a fresh read (`Mirror.Outcome.staleRefunds`).
    let staleRefunds: Int
    let tokenAcknowledged: Bool

    /// Throws `MirrorError(.productNotMapped)` when the snapshot's product maps to no plan price, and
    /// `.ownershipConflict` when `claimant` may not have the purchase (`Linking.decide`).
    init(_ snapshot: StoreSnapshot, known: KnownState, connectionID: Int64, requireIssuedTokens: Bool,
         claimant: String? = nil) throws {
        guard let planPriceID = known.planPriceID else {
            let basePlan = snapshot.basePlanID.map { " base plan \($0)" } ?? ""
            throw MirrorError(.productNotMapped, "product \(snapshot.productID)\(basePlan) is not mapped on connection \(connectionID)")
        }
        let decision = Linking.decide(existingCustomerID: known.customerID, token: known.token,
                                      requireIssuedTokens: requireIssuedTokens, claimant: claimant)
        if case .refused = decision {
            throw MirrorError(.ownershipConflict, "lineage \(snapshot.lineage) on connection \(connectionID) belongs to "
                + "another customer")
        }
        customerID = decision.linkedCustomerID
        linkedNow = if case .link = decision { true } else { false }
        // A token another token replaced (an upgrade) no longer speaks for the lineage: whatever its own state,
        // only its charges count. A token that replaces the one the mirror holds speaks for it, however old its
        // snapshot: the predecessor may have been fetched later but says nothing newer.
        fresh = !known.tokenReplaced && (known.succeedsCurrentToken || known.asOf.map { snapshot.asOf >= $0 } ?? true)

        purchase = switch (known.purchaseID, fresh, linkedNow) {
        case (nil, _, _): .insert
        case (let id?, true, _): .overwrite(purchaseID: id)
        case (let id?, false, true): .link(purchaseID: id)
        case (let id?, false, false): .keep(purchaseID: id)
        }
        let mirrored = Records.MirroredState(snapshot, planPriceID: planPriceID)
        subscription = customerID == nil ? nil : fresh ? .overwrite(mirrored) : .createMissing(fallback: mirrored)

        let familyShared = snapshot.ownership == .familyShared
        let bookRefunds = fresh || !snapshot.refundsReversible
        bookings = familyShared ? Bookings() : Self.bookings(
            snapshot.charges, bookRefunds: bookRefunds,
            reverseMissingRefunds: fresh && snapshot.refundsReversible && known.refundsToReverse)
        staleRefunds = bookRefunds || familyShared ? 0 : known.refundsNotHeld
        // A token that replaced none and is recorded already (every renewal's) has nothing to write.
        let chain = PurchaseTokens.chain(of: snapshot)
        tokens = chain.count == 1 && known.tokenRecorded ? [] : chain

        var timeline = Timeline()
        if fresh {
            timeline.add(known.state == snapshot.state ? "refreshed" : "state_changed", [
                "state": snapshot.state.rawValue, "previous_state": known.state?.rawValue, "product": snapshot.productID,
                "expires_at": snapshot.expiresAt.map(Timeline.timestamp), "auto_renew": snapshot.autoRenew ? "true" : "false",
            ])
        } else {
            timeline.add("stale_snapshot_ignored", ["as_of": Timeline.timestamp(snapshot.asOf), "state": snapshot.state.rawValue])
        }
        if linkedNow { timeline.add("linked", ["customer_id": customerID, "by": claimant == nil ? nil : "registration"]) }
        if customerID == nil && known.purchaseID == nil {
            timeline.add("pending_claim", ["account_token": snapshot.accountToken == nil ? "none" : "unknown"])
        }
        self.timeline = timeline
        previousState = known.state
        tokenAcknowledged = known.tokenAcknowledged
        state = fresh ? snapshot.state : (known.state ?? snapshot.state)
    }

    /// - Parameters:
    ///   - bookRefunds: whether the answer's refunds count (see `StoreSnapshot.refundsReversible`).
    ///   - reverseMissingRefunds: whether a live refund of a charge the answer shows unrefunded was reversed
    ///     (only where refunds are reversible, from a fresh answer).
    private static func bookings(_ charges: [StoreCharge], bookRefunds: Bool, reverseMissingRefunds: Bool) -> Bookings {
        // An upsert that meets the same row twice in one statement fails: each charge goes in once.
        var seen = Set<String>()
        let charges = charges.filter { seen.insert($0.transactionID).inserted }
        return Bookings(
            charges: charges,
            refunds: bookRefunds ? charges.compactMap { charge in
                charge.refund.map { StoreRefundUpdate.Refund(transactionID: charge.transactionID, refund: $0) }
            } : [],
            reversals: reverseMissingRefunds ? charges.filter { $0.refund == nil } : [])
    }

    /// The outcome, once the writes have told what was new.
    func outcome(purchaseID: Int64, booked: Booking.Result) -> Mirror.Outcome {
        Mirror.Outcome(purchaseID: purchaseID, applied: fresh, customerID: customerID, linkedNow: linkedNow,
                       previousState: previousState, state: state, chargesBooked: booked.charges.count,
                       refundsBooked: booked.refunds.count, refundsReversed: booked.reversals.count,
                       staleRefunds: staleRefunds, tokenAcknowledged: tokenAcknowledged)
    }
}
