import Postgres

/// The windows the Mobile Stores API counts its budgets in (`api_rate_windows`): one per account budget, app
/// token and failing address. Tokens and addresses come and go, so windows long ended are dropped by the
/// worker's hourly purge; a window dropped early would only forgive a request or two.
public enum APIRateWindows {
    /// Deletes windows that ended over an hour ago, `batchSize` rows per statement; returns how many.
    public static func purge(pool: PostgresPool, batchSize: Int = 5000) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.query("""
                DELETE FROM api_rate_windows WHERE ctid = ANY(ARRAY(
                    SELECT ctid FROM api_rate_windows WHERE window_started_at < now() - interval '61 minutes' LIMIT $1))
                """, [batchSize]).affectedRows
            total += deleted
            if deleted < batchSize { return total }
        }
    }
}
