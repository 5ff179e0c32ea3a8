import Foundation
import Postgres

/// Where a connection's reconciliation sweep stopped (`sweep_watermarks`).
struct Watermark: Sendable {
    /// Everything up to here was handled.
    let watermark: Date
    /// The page to continue from inside the current window, when the last run stopped between pages.
    let cursor: String?

    static func read(connectionID: Int64, sweep: String, on db: isolated PostgresConnection) throws -> Watermark? {
        try db.query("SELECT watermark, cursor FROM sweep_watermarks WHERE connection_id = $1 AND sweep = $2",
                     [connectionID, sweep]).first.map { Watermark(watermark: try $0.decode(0), cursor: try $0.decodeOptional(1)) }
    }

    static func write(_ mark: Watermark, connectionID: Int64, sweep: String, on db: isolated PostgresConnection) throws {
        _ = try db.query("""
            INSERT INTO sweep_watermarks (connection_id, sweep, watermark, cursor) VALUES ($1, $2, $3, $4)
            ON CONFLICT (connection_id, sweep) DO UPDATE SET watermark = EXCLUDED.watermark, cursor = EXCLUDED.cursor,
                updated_at = now()
            """, [connectionID, sweep, mark.watermark, mark.cursor])
    }
}
