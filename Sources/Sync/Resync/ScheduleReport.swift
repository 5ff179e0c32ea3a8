import Foundation
import Postgres

/// The last run of each schedule for `storesync status`: when and by whom it was claimed, whether its own
/// job is still pending, and for the daily resync how many lineages are still waiting and how much drift
/// (changes no notification had delivered) it found so far.
public struct ScheduleReport: Sendable {
    public let schedule: String
    public let period: String
    public let claimedBy: String
    public let claimedAt: Date
    /// The schedule's own job (the fan-out) has not finished.
    public let running: Bool
    /// Daily resync jobs still queued, from this run or an earlier one whose spread outlasted its day (daily
    /// resync only).
    public let resyncsPending: Int
    /// Drift events recorded since the run was claimed.
    public let drift: Int

    public static func read(on db: isolated PostgresConnection) throws -> [ScheduleReport] {
        try db.query("""
            SELECT r.schedule, r.period, r.claimed_by, r.claimed_at,
                   EXISTS (SELECT 1 FROM jobs j WHERE j.id = r.job_id),
                   CASE WHEN r.schedule = 'daily-sync' THEN
                       (SELECT count(*) FROM jobs j WHERE j.unique_key LIKE 'resync:' || $1 || ':%') ELSE 0 END,
                   CASE WHEN r.schedule = 'daily-sync' THEN
                       (SELECT count(*) FROM purchase_events e WHERE e.kind = 'drift' AND e.occurred_at >= r.claimed_at)
                   ELSE 0 END
            FROM (SELECT DISTINCT ON (schedule) * FROM schedule_runs ORDER BY schedule, claimed_at DESC) r
            ORDER BY r.schedule
            """, [DailySyncHandler.batch]).map {
            ScheduleReport(schedule: try $0.decode(0), period: try $0.decode(1), claimedBy: try $0.decode(2),
                           claimedAt: try $0.decode(3), running: try $0.decode(4), resyncsPending: try $0.decode(5),
                           drift: try $0.decode(6))
        }
    }
}
