import Accounts
import Foundation
import Postgres
import StoreModel

extension Mirror {
    /// What applying a refund-only update did.
    public struct RefundOutcome: Sendable, Equatable {
        public let purchaseID: Int64
        /// The store state the mirror holds, which a refund-only update leaves as it is.
        public let state: StoreState
        /// Refunds inserted or grown.
        public let refundsBooked: Int

        /// A short word for the job's outcome and the logs.
        public var summary: String {
            "refunds only, kept \(state.rawValue): " + (refundsBooked > 0 ? "\(refundsBooked) refund(s) booked" : "nothing new")
        }
    }

    /// Books `update`'s refunds on the invoices of the lineage's charges, under the lineage's lock and in the
    /// caller's transaction, and changes nothing else: no purchase, subscription, token or store state, since the
    /// store said nothing about them. Each refund is booked once and only grows (`Booking.book(refunds:…)`), so a
    /// replay books nothing more; each booked refund is a `refund_booked` event on the purchase's timeline. Throws
    /// `MirrorError` — and writes nothing — when the connection does not mirror the lineage (`unknownPurchase`) or a
    /// refunded charge has no invoice on it (`chargeNotBooked`).
    public static func applyRefunds(_ update: StoreRefundUpdate, connection: StoreConnection,
                                    on db: isolated PostgresConnection) throws -> RefundOutcome {
        guard update.store == connection.store else {
            throw MirrorError(.storeMismatch, "\(update.store) refunds cannot apply to \(connection.store) connection \(connection.id)")
        }
        // One row per refunded charge without an invoice on the lineage's purchase, or a single row with none.
        let rows = try LineageLock.acquire(lockKey(connectionID: connection.id, lineage: update.lineage), thenRead: PostgresStatement("""
            SELECT p.id, p.store_state, r.transaction_id
            FROM (SELECT 1) AS one
            LEFT JOIN store_purchases p ON p.connection_id = $1 AND p.lineage = $2
            LEFT JOIN unnest($4::text[]) AS r(transaction_id)
                ON NOT EXISTS (SELECT 1 FROM invoices i WHERE i.purchase_id = p.id AND i.store = $3
                                                          AND i.store_transaction_id = r.transaction_id)
            """, [connection.id, update.lineage, update.store.rawValue, PostgresArray(update.refunds.map(\.transactionID))]),
            on: db)
        let state: String? = try rows[0].decodeOptional(1)
        let plan = try RefundPlan(update, purchaseID: try rows[0].decodeOptional(0),
                                  state: state.flatMap(StoreState.init(rawValue:)),
                                  unbookedCharges: try rows.compactMap { try $0.decodeOptional(2) }, connectionID: connection.id)
        let booked = try Booking.book(refunds: plan.refunds, store: update.store, asOf: update.asOf, on: db)
        var timeline = Timeline()
        booked.forEach { timeline.add("refund_booked", ["transaction_id": $0]) }
        try timeline.write(purchaseID: plan.purchaseID, source: update.source, on: db)
        return RefundOutcome(purchaseID: plan.purchaseID, state: plan.state, refundsBooked: booked.count)
    }
}

/// What a refund-only update does, decided from what the lineage's read found: `MirrorPlan`'s counterpart for an
/// answer that carries refunds alone. It books them only on a purchase the connection mirrors, and only when every
/// refunded charge has its invoice there — booking part of them would hide the rest.
struct RefundPlan: Equatable {
    let purchaseID: Int64
    /// The store state the mirror holds and keeps.
    let state: StoreState
    let refunds: [StoreRefundUpdate.Refund]

    /// - Parameters:
    ///   - purchaseID: the lineage's purchase on the connection, nil when it has none; `state` is its store state.
    ///   - unbookedCharges: the refunded charges with no invoice on that purchase.
    init(_ update: StoreRefundUpdate, purchaseID: Int64?, state: StoreState?, unbookedCharges: [String],
         connectionID: Int64) throws {
        guard let purchaseID, let state else {
            throw MirrorError(.unknownPurchase, "connection \(connectionID) mirrors no purchase lineage \(update.lineage)")
        }
        guard unbookedCharges.isEmpty else {
            throw MirrorError(.chargeNotBooked, "the refunded charge(s) \(unbookedCharges.joined(separator: ", ")) have no "
                + "invoice on lineage \(update.lineage) of connection \(connectionID), and the store no longer answers for "
                + "the purchase to book them from")
        }
        self.purchaseID = purchaseID
        self.state = state
        refunds = update.refunds
    }
}
