import Foundation
import Postgres

/// A recurring job run once per period by whichever worker claims the period first — no leader.
public struct Schedule: Sendable {
    /// How time is cut into periods; the key names the period a moment falls in (UTC).
    public enum Period: Sendable, Equatable {
        case daily
        case hourly
        case everyMinutes(Int)

        /// The period containing `date`, e.g. `2026-11-29` (daily), `2026-11-29T14` (hourly).
        public func key(for date: Date) -> String {
            var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
            var parts = tm()
            gmtime_r(&seconds, &parts)
            func pad(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
            let day = "\(parts.tm_year + 1900)-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))"
            switch self {
            case .daily: return day
            case .hourly: return "\(day)T\(pad(parts.tm_hour))"
            case .everyMinutes(let minutes):
                let minuteOfDay = Int(parts.tm_hour) * 60 + Int(parts.tm_min)
                let start = minuteOfDay - minuteOfDay % max(minutes, 1)
                return "\(day)T\(pad(Int32(start / 60))):\(pad(Int32(start % 60)))"
            }
        }
    }

    /// Unique among schedules, e.g. `daily-sync`, `purge`.
    public let name: String
    public let period: Period
    /// The job each period enqueues; its payload names the schedule and the period.
    public let jobKind: JobKind
    public let priority: Int16
    private let makeArgs: @Sendable (_ schedule: String, _ period: String) throws -> String

    public init<Args: ScheduledJobArgs>(name: String, period: Period, job: Args.Type, priority: Int16 = 0) {
        self.name = name
        self.period = period
        self.jobKind = Args.kind
        self.priority = priority
        self.makeArgs = { try JobPayload.encode(Args(schedule: $0, period: $1)) }
    }

    /// Claims the period containing `date` for `worker`; returns the period and the job id enqueued when this
    /// call won, nil when another worker (or an earlier call) already claimed it. Claim and enqueue commit together.
    /// `date` nil means the database's `now()`: one clock for every worker, so a host whose clock runs ahead
    /// cannot claim tomorrow's period today and leave tomorrow without a run.
    public func claim(at date: Date? = nil, worker: String, pool: PostgresPool) async throws
        -> (period: String, jobID: Int64?)?
    {
        let (name, periods, jobKind, priority, makeArgs) = (name, self.period, jobKind, priority, makeArgs)
        return try await pool.transaction { connection in
            let period = periods.key(for: try date ?? JobQueue.now(on: connection))
            let job = NewJob(kind: jobKind.name, payload: try makeArgs(name, period), priority: priority,
                             uniqueKey: "schedule:\(name):\(period)")
            let won = try connection.query("""
                INSERT INTO schedule_runs (schedule, period, claimed_by) VALUES ($1, $2, $3)
                ON CONFLICT DO NOTHING RETURNING 1
                """, [name, period, worker])
            guard !won.isEmpty else { return nil }
            let id = try JobQueue.enqueue(job, on: connection)
            try connection.query("UPDATE schedule_runs SET job_id = $3 WHERE schedule = $1 AND period = $2",
                                 [name, period, id])
            return (period, id)
        }
    }
}
