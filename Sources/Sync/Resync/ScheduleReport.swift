import Foundation
import Mirror
import Postgres
import Queue

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
        let daily = DailySyncHandler.schedule.name
        return try ScheduleRun.latest(fannedOut: [daily: "resync:\(DailySyncHandler.batch):"], on: db).map { run in
            ScheduleReport(schedule: run.schedule, period: run.period, claimedBy: run.claimedBy, claimedAt: run.claimedAt,
                           running: run.running, resyncsPending: run.fannedOutPending,
                           drift: run.schedule == daily ? try DriftEvents.count(since: run.claimedAt, on: db) : 0)
        }
    }
}
