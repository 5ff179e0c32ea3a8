import Foundation
import Postgres

/// Where a connection's sweep or fan-out stopped (`sweep_watermarks`): the schedules' progress per store
/// connection, kept beside the schedules' runs.
public struct Watermark: Sendable {
    /// Everything up to here was handled.
    public let watermark: Date
    /// The page to continue from inside the current window, when the last run stopped between pages.
    public let cursor: String?

    public init(watermark: Date, cursor: String?) {
        self.watermark = watermark
        self.cursor = cursor
    }

    /// The connection's mark for `sweep`, nil before its first run.
    public static func read(connectionID: Int64, sweep: String, on db: isolated PostgresConnection) throws -> Watermark? {
        try db.query("SELECT watermark, cursor FROM sweep_watermarks WHERE connection_id = $1 AND sweep = $2",
                     [connectionID, sweep]).first.map { Watermark(watermark: try $0.decode(0), cursor: try $0.decodeOptional(1)) }
    }

    /// Records where the sweep stands now (and the page to resume from, if any).
    public static func write(_ mark: Watermark, connectionID: Int64, sweep: String, on db: isolated PostgresConnection) throws {
        _ = try db.query("""
            INSERT INTO sweep_watermarks (connection_id, sweep, watermark, cursor) VALUES ($1, $2, $3, $4)
            ON CONFLICT (connection_id, sweep) DO UPDATE SET watermark = EXCLUDED.watermark, cursor = EXCLUDED.cursor,
                updated_at = now()
            """, [connectionID, sweep, mark.watermark, mark.cursor])
    }

    /// Moves the watermark to the start of `day` (UTC, `YYYY-MM-DD`); false when it already stood there or
    /// later. A concurrent caller waits on the row and then sees the day taken.
    public static func advance(connectionID: Int64, sweep: String, toDay day: String,
                               on db: isolated PostgresConnection) throws -> Bool {
        try !db.query("""
            INSERT INTO sweep_watermarks (connection_id, sweep, watermark)
            VALUES ($1, $2, $3::date::timestamp AT TIME ZONE 'UTC')
            ON CONFLICT (connection_id, sweep) DO UPDATE SET watermark = EXCLUDED.watermark, updated_at = now()
                WHERE sweep_watermarks.watermark < EXCLUDED.watermark
            RETURNING 1
            """, [connectionID, sweep, day]).isEmpty
    }
}
