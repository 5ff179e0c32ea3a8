import Accounts
import Foundation
import Postgres
import StoreModel

/// Applies what a store said about a purchase lineage to SubscriptionFlow's billing records. Store-agnostic:
/// Apple and Google both arrive here as a `StoreSnapshot`. It runs inside the caller's transaction — the
/// same one that records the notification's receipt and completes its job — so effects are all-or-nothing.
public enum Mirror {
    /// What applying one snapshot did.
    public struct Outcome: Sendable, Equatable {
        public let purchaseID: Int64
        /// `false` when the purchase already holds newer store state: only new charges and refunds were booked.
        public let applied: Bool
        public let customerID: String?
        public let linkedNow: Bool
        public let previousState: StoreState?
        public let state: StoreState
        public let chargesBooked: Int
        public let refundsBooked: Int
        public let refundsReversed: Int
        /// Refunds a stale answer showed that the mirror neither booked (`StoreSnapshot.refundsReversible`) nor
        /// holds live at that amount already. The two answers' reads of one lineage are not ordered exactly by
        /// `asOf`, so the caller has a fresh read decide.
        public let staleRefunds: Int
        /// The snapshot's purchase token was acknowledged already when it was applied (Google: an acknowledgement
        /// that committed after the store answered still pending).
        public let tokenAcknowledged: Bool

        /// A short word for the job's outcome and the logs.
        public var summary: String {
            var words = [applied ? "applied \(state.rawValue)" : "stale: kept newer state"]
            if customerID == nil { words.append("unlinked (pending claim)") } else if linkedNow { words.append("linked") }
            if chargesBooked > 0 { words.append("\(chargesBooked) charge(s) booked") }
            if refundsBooked > 0 { words.append("\(refundsBooked) refund(s) booked") }
            if refundsReversed > 0 { words.append("\(refundsReversed) refund(s) reversed") }
            if staleRefunds > 0 { words.append("\(staleRefunds) refund(s) of the stale answer left to a fresh read") }
            return words.joined(separator: ", ")
        }
    }

    /// The lock `apply` takes for a purchase lineage. Handlers pass it on as their result's `serialKey`, so
    /// one worker never commits two applies of a lineage in concurrent transactions that would wait on it.
    public static func lockKey(connectionID: Int64, lineage: String) -> String {
        "storesync.lineage:\(connectionID):\(lineage)"
    }

    /// Applies `snapshot` for `connection`: reads what the database knows of the lineage under its lock (one
    /// statement), decides everything from that in a `MirrorPlan`, then writes the plan. The caller has checked the
    /// environment (a mismatch is skipped before anything is fetched); it is checked again here because mixing
    /// environments would book test purchases as revenue. Throws `MirrorError` when the product is not mapped.
    ///
    /// - Parameter claimant: the customer a backend registers the purchase for; the purchase links to them
    ///   unless it is another customer's, which throws `MirrorError(.ownershipConflict)` before any write.
    public static func apply(_ snapshot: StoreSnapshot, connection: StoreConnection, claimant: String? = nil,
                             on db: isolated PostgresConnection) throws -> Outcome {
        try requireSameStore(snapshot, connection)
        guard snapshot.environment == connection.environment else {
            throw MirrorError(.environmentMismatch, "a \(snapshot.environment.rawValue) purchase cannot be mirrored on "
                + "\(connection.environment.rawValue) connection \(connection.id)")
        }
        let (key, read) = lockedRead(snapshot, connection: connection)
        let known = try KnownState(snapshot: snapshot, row: LineageLock.acquire(key, thenRead: read, on: db)[0])
        let plan = try MirrorPlan(snapshot, known: known, connectionID: connection.id,
                                  requireIssuedTokens: connection.requireIssuedTokens, claimant: claimant)
        return try execute(plan, of: snapshot, connectionID: connection.id, accountID: connection.accountID, on: db)
    }

    /// What `apply` of `snapshot` for `connection` begins with — its lineage's lock and the read under it — to send
    /// ahead with the rest of a group commit's (`Finish.readAhead`); keyed by `lockKey`, the apply's serial key.
    public static func readAhead(_ snapshot: StoreSnapshot, connection: StoreConnection) -> PostgresReadAhead {
        let (key, read) = lockedRead(snapshot, connection: connection)
        return LineageLock.readAhead(key, thenRead: read)
    }

    /// The lineage lock `apply` takes, and what it reads under it.
    private static func lockedRead(_ snapshot: StoreSnapshot, connection: StoreConnection)
        -> (key: String, read: PostgresStatement)
    {
        (lockKey(connectionID: connection.id, lineage: snapshot.lineage),
         KnownState.statement(snapshot: snapshot, connectionID: connection.id, accountID: connection.accountID))
    }

    static func requireSameStore(_ snapshot: StoreSnapshot, _ connection: StoreConnection) throws {
        guard snapshot.store == connection.store else {
            throw MirrorError(.storeMismatch, "a \(snapshot.store) snapshot cannot apply to \(connection.store) connection \(connection.id)")
        }
    }

    /// Writes `plan`. Only what the database finds at write time — which charges, refunds and replaced tokens
    /// were new — is learnt here, for the timeline and the outcome.
    private static func execute(_ plan: MirrorPlan, of snapshot: StoreSnapshot, connectionID: Int64, accountID: Int64,
                                on db: isolated PostgresConnection) throws -> Outcome {
        let purchaseID = try Records.upsertPurchase(snapshot, plan.purchase, connectionID: connectionID,
                                                    customerID: plan.customerID, on: db)
        if let customerID = plan.customerID, let subscription = plan.subscription {
            let mirrored = switch subscription {
            case .overwrite(let mirrored): mirrored
            case .createMissing(let fallback):
                try Records.MirroredState(storedFor: purchaseID, store: snapshot.store, on: db) ?? fallback
            }
            try Records.upsertSubscription(mirrored, accountID: accountID, customerID: customerID,
                                           purchaseID: purchaseID, overwrite: plan.fresh, on: db)
        }
        if plan.linkedNow {
            try Records.claimInvoices(purchaseID: purchaseID, customerID: plan.customerID, on: db)
        }
        let booked = try Booking.book(plan.bookings, store: snapshot.store, purchaseID: purchaseID,
                                      customerID: plan.customerID, asOf: snapshot.asOf, on: db)
        let replaced = try PurchaseTokens.record(plan.tokens, purchaseID: purchaseID, connectionID: connectionID, on: db)

        var timeline = plan.timeline
        replaced.forEach { timeline.add("token_replaced", ["purchase_token": $0]) }
        booked.charges.forEach { timeline.add("charge_booked", ["transaction_id": $0]) }
        booked.refunds.forEach { timeline.add("refund_booked", ["transaction_id": $0]) }
        booked.reversals.forEach { timeline.add("refund_reversed", ["transaction_id": $0]) }
        try timeline.write(purchaseID: purchaseID, source: snapshot.source, on: db)
        return plan.outcome(purchaseID: purchaseID, booked: booked)
    }
}

/// What the database already knows that the rules need, in one statement (read under the lineage lock).
struct KnownState {
    let planPriceID: Int64?
    let purchaseID: Int64?
    let customerID: String?
    let asOf: Date?
    let state: StoreState?
    let token: Linking.TokenMatch
    /// The snapshot's purchase token was replaced by a later one of the lineage.
    let tokenReplaced: Bool
    /// The snapshot's token replaced a token the mirror still holds as the lineage's current one.
    let succeedsCurrentToken: Bool
    /// The snapshot's token is recorded as acknowledged (`PurchaseTokens.recordAcknowledgement`).
    var tokenAcknowledged = false
    /// The snapshot's token is recorded for the connection already (every renewal's is).
    var tokenRecorded = false
    /// A charge the snapshot shows without a refund, in a copy signed at or after the refund, has a live refund
    /// booked: the store reversed it, if its refunds are reversible at all. Known here, the common case — nothing
    /// to reverse — costs no statement of its own.
    let refundsToReverse: Bool
    /// How many of the snapshot's refunds the mirror does not hold live at that amount or more, where refunds
    /// are reversible: what a stale answer showing them leaves for a fresh read to decide.
    let refundsNotHeld: Int

    static func statement(snapshot: StoreSnapshot, connectionID: Int64, accountID: Int64) -> PostgresStatement {
        // Tokens and customer ids are UUIDs; anything else cannot match either and is not sent to a uuid cast.
        let tokenUUID = snapshot.accountToken.flatMap { UUID(uuidString: $0)?.uuidString.lowercased() }
        // Only a store whose refunds can be reversed needs either refund question answered.
        let reversible = snapshot.refundsReversible ? snapshot.charges : []
        let refunded = reversible.filter { $0.refund != nil }
        let unrefunded = reversible.filter { $0.refund == nil }
        return PostgresStatement("""
            SELECT (SELECT plan_price_id FROM product_mappings
                    WHERE connection_id = $1 AND store_product_id = $3 AND base_plan_id = $4),
                   p.id, p.customer_id::text, p.as_of, p.store_state,
                   (SELECT customer_id::text FROM account_tokens WHERE token = $5::uuid AND account_id = $6),
                   (SELECT id::text FROM customers WHERE id = $5::uuid AND account_id = $6),
                   t.replaced_by IS NOT NULL, t.acknowledged_at IS NOT NULL, t.purchase_token IS NOT NULL,
                   EXISTS (SELECT 1 FROM purchase_tokens
                           WHERE connection_id = $1 AND purchase_token = ANY($8::text[]) AND replaced_by IS NULL
                             AND purchase_id = p.id),
                   EXISTS (SELECT 1 FROM unnest($10::text[], $13::timestamptz[]) AS c(transaction_id, seen_at)
                           JOIN refunds f ON f.store = $9 AND f.refunded_transaction_id = c.transaction_id
                           WHERE f.reversed_at IS NULL AND (c.seen_at IS NULL OR c.seen_at >= f.refunded_at)),
                   (SELECT count(*) FROM unnest($11::text[], $12::bigint[]) AS r(transaction_id, amount)
                    WHERE NOT EXISTS (SELECT 1 FROM refunds f
                                      WHERE f.store = $9 AND f.refunded_transaction_id = r.transaction_id
                                        AND f.reversed_at IS NULL AND f.amount_minor >= r.amount))
            FROM (SELECT 1) AS one
            LEFT JOIN store_purchases p ON p.connection_id = $1 AND p.lineage = $2
            LEFT JOIN purchase_tokens t ON t.connection_id = $1 AND t.purchase_token = $7
            """, [connectionID, snapshot.lineage, snapshot.productID, snapshot.basePlanID ?? "", tokenUUID,
                  accountID, snapshot.purchaseToken, PostgresArray(snapshot.replacedTokens),
                  snapshot.store.rawValue, PostgresArray(unrefunded.map(\.transactionID)),
                  PostgresArray(refunded.map(\.transactionID)), PostgresArray(refunded.compactMap { $0.refund?.amount.minorUnits }),
                  PostgresArray(unrefunded.map(\.seenAt))])
    }
}

extension KnownState {
    /// The answer of `statement`.
    init(snapshot: StoreSnapshot, row: PostgresRow) throws {
        let token: Linking.TokenMatch
        if snapshot.accountToken == nil {
            token = .none
        } else if let issued: String = try row.decodeOptional(5) {
            token = .issued(customerID: issued)
        } else if let raw: String = try row.decodeOptional(6) {
            token = .rawCustomerID(customerID: raw)
        } else {
            token = .unknown
        }
        let stateName: String? = try row.decodeOptional(4)
        planPriceID = try row.decodeOptional(0)
        purchaseID = try row.decodeOptional(1)
        customerID = try row.decodeOptional(2)
        asOf = try row.decodeOptional(3)
        state = stateName.flatMap(StoreState.init(rawValue:))
        self.token = token
        tokenReplaced = try row.decode(7)
        tokenAcknowledged = try row.decode(8)
        tokenRecorded = try row.decode(9)
        succeedsCurrentToken = try row.decode(10)
        refundsToReverse = try row.decode(11)
        refundsNotHeld = try row.decode(12)
    }
}
