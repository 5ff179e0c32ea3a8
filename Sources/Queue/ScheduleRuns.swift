import Foundation
import Postgres

/// The last claimed run of a schedule (`schedule_runs`), with what the queue still holds of it.
public struct ScheduleRun: Sendable {
    public let schedule: String
    public let period: String
    public let claimedBy: String
    public let claimedAt: Date
    /// The schedule's own job has not finished.
    public let running: Bool
    /// Jobs still queued whose unique key starts with the prefix asked about (what the run fanned out).
    public let fannedOutPending: Int

    /// Each schedule's latest run; `fannedOut` names, per schedule, the unique-key prefix of the jobs its run
    /// queues, to count those still waiting.
    public static func latest(fannedOut: [String: String], on db: isolated PostgresConnection) throws -> [ScheduleRun] {
        try db.query("""
            SELECT r.schedule, r.period, r.claimed_by, r.claimed_at,
                   EXISTS (SELECT 1 FROM jobs j WHERE j.id = r.job_id),
                   CASE WHEN f.pattern IS NULL THEN 0
                        ELSE (SELECT count(*) FROM jobs j WHERE j.unique_key LIKE f.pattern) END
            FROM (SELECT DISTINCT ON (schedule) * FROM schedule_runs ORDER BY schedule, claimed_at DESC) r
            LEFT JOIN unnest($1::text[], $2::text[]) AS f(schedule, pattern) ON f.schedule = r.schedule
            ORDER BY r.schedule
            """, [PostgresArray(Array(fannedOut.keys)), PostgresArray(fannedOut.values.map(JobQueue.likePrefix))]).map {
            ScheduleRun(schedule: try $0.decode(0), period: try $0.decode(1), claimedBy: try $0.decode(2),
                        claimedAt: try $0.decode(3), running: try $0.decode(4), fannedOutPending: try $0.decode(5))
        }
    }
}

extension ScheduleRun {
    /// Drops claims older than `days`: the schedule's unique key keeps a period from running twice only while
    /// its claim is there, and no period that old is claimed again.
    public static func purge(olderThanDays days: Int, pool: PostgresPool) async throws -> Int {
        try await pool.query("DELETE FROM schedule_runs WHERE claimed_at < now() - $1 * interval '1 day'", [days])
            .affectedRows
    }
}
