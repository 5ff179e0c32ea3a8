import Foundation
import Postgres
import StoreModel

/// The timeline entry a resync leaves when it found what no notification had delivered.
public enum DriftEvents {
    /// - Parameter kinds: what drifted (`state`, `charge`, `refund`); nothing is written for none.
    public static func record(_ kinds: [String], purchaseID: Int64, state: StoreState, previousState: StoreState?,
                              charges: Int, refunds: Int, on db: isolated PostgresConnection) throws {
        guard !kinds.isEmpty else { return }
        _ = try db.query("""
            INSERT INTO purchase_events (purchase_id, kind, source, detail)
            VALUES ($1, 'drift', 'resync', jsonb_build_object('kinds', $2::text[], 'state', $3::text,
                                                              'previous_state', $4::text, 'charges', $5::int,
                                                              'refunds', $6::int))
            """, [purchaseID, PostgresArray(kinds), state.rawValue, previousState?.rawValue, charges, refunds])
    }
}

extension DriftEvents {
    /// How many drift entries resyncs recorded since `date`.
    public static func count(since date: Date, on db: isolated PostgresConnection) throws -> Int {
        try db.query("SELECT count(*) FROM purchase_events WHERE kind = 'drift' AND occurred_at >= $1", [date])[0].decode(0)
    }
}
