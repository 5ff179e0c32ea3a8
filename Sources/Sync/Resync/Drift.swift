import Mirror
import Postgres
import StoreModel

/// What a resync found that no notification had delivered: the on-call signal that notifications are being
/// lost. Recorded on the purchase's timeline and counted by connection and kind.
enum Drift {
    /// The kinds of drift an apply outcome shows: a state change, a charge or a refund booked (or reversed).
    static func kinds(_ outcome: Mirror.Outcome) -> [String] {
        guard outcome.applied else { return [] }
        var kinds: [String] = []
        if let previous = outcome.previousState, previous != outcome.state { kinds.append("state") }
        if outcome.chargesBooked > 0 { kinds.append("charge") }
        if outcome.refundsBooked > 0 || outcome.refundsReversed > 0 { kinds.append("refund") }
        return kinds
    }

    static func record(_ outcome: Mirror.Outcome, connectionID: Int64, metrics: SyncMetrics?,
                       on db: isolated PostgresConnection) throws {
        try record(kinds(outcome), purchaseID: outcome.purchaseID, state: outcome.state, previousState: outcome.previousState,
                   charges: outcome.chargesBooked, refunds: outcome.refundsBooked + outcome.refundsReversed,
                   connectionID: connectionID, metrics: metrics, on: db)
    }

    /// A refund-only update (the store no longer answers for the purchase) drifts by the refunds it booked.
    static func record(_ outcome: Mirror.RefundOutcome, connectionID: Int64, metrics: SyncMetrics?,
                       on db: isolated PostgresConnection) throws {
        try record(outcome.refundsBooked > 0 ? ["refund"] : [], purchaseID: outcome.purchaseID, state: outcome.state,
                   previousState: outcome.state, charges: 0, refunds: outcome.refundsBooked, connectionID: connectionID,
                   metrics: metrics, on: db)
    }

    private static func record(_ kinds: [String], purchaseID: Int64, state: StoreState, previousState: StoreState?,
                               charges: Int, refunds: Int, connectionID: Int64, metrics: SyncMetrics?,
                               on db: isolated PostgresConnection) throws {
        try DriftEvents.record(kinds, purchaseID: purchaseID, state: state, previousState: previousState, charges: charges,
                               refunds: refunds, on: db)
        for kind in kinds { metrics?.drift(connectionID: connectionID, kind: kind) }
    }
}
