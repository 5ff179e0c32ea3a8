import Accounts
import Postgres
import Queue

/// Housekeeping run by the hourly `purge` schedule: drops dedup receipts past their 7-day window, schedule
/// claims older than 90 days and the API's rate windows that ended an hour ago, in bounded batches.
public struct PurgeHandler: JobHandler {
    /// The `queue.purge` job's args: the hour it runs for, when the schedule queued it (an operator's
    /// `storesync enqueue queue.purge` names none).
    public struct Args: ScheduledJobArgs {
        public static let kind: JobKind = "queue.purge"
        public let schedule: String?
        public let period: String?

        public init(schedule: String, period: String) {
            self.schedule = schedule
            self.period = period
        }
    }

    public static let schedule = Schedule(name: "purge", period: .hourly, job: Args.self, priority: -5)

    public init() {}

    public func run(_ args: Args, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let receipts = try await NotificationReceipts.purge(pool: context.pool)
        let claims = try await ScheduleRun.purge(olderThanDays: 90, pool: context.pool)
        let windows = try await APIRateWindows.purge(pool: context.pool)
        context.logger.info("purged", ["receipts": .int(receipts), "schedule_runs": .int(claims),
                                       "api_rate_windows": .int(windows)])
        return .done("purged \(receipts) receipts")
    }
}
