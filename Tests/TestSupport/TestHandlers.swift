import Foundation
import Postgres
import Queue
import Worker

/// Job kinds that exist only in tests, shared by in-process tests and the `storesync-testworker` binary.
public enum TestHandlers {
    /// `test.record`: optionally sleeps (`sleep_ms`, only on attempt `sleep_on_attempt` when given), then
    /// records one `test_effects` row in the completion's transaction — so counting rows counts effects. A
    /// schedule may queue it (`storesync-testworker --daily-schedule`).
    public struct Record: ScheduledJobArgs {
        public static let kind: JobKind = "test.record"

        let sleepMilliseconds: Int?
        let sleepOnAttempt: Int?
        let schedule: String?
        let period: String?

        public init(schedule: String, period: String) {
            sleepMilliseconds = nil
            sleepOnAttempt = nil
            self.schedule = schedule
            self.period = period
        }

        enum CodingKeys: String, CodingKey {
            case sleepMilliseconds = "sleep_ms", sleepOnAttempt = "sleep_on_attempt", schedule, period
        }
    }

    /// `test.fail`: fails with `message`; `permanent: true` dead-letters, `retry_after_ms` gives a hint.
    public struct Fail: JobArgs {
        public static let kind: JobKind = "test.fail"

        let message: String?
        let permanent: Bool?
        let retryAfterMilliseconds: Int?

        enum CodingKeys: String, CodingKey {
            case message, permanent, retryAfterMilliseconds = "retry_after_ms"
        }
    }

    public static let record = Record.kind.name
    public static let fail = Fail.kind.name

    public static func all() -> JobHandlers {
        var handlers = JobHandlers()
        handlers.register(RecordHandler())
        handlers.register(FailHandler())
        return handlers
    }

    /// The table `test.record` writes to; create it before starting workers.
    public static func createEffectsTable(_ pool: PostgresPool) async throws {
        try await pool.query("""
            CREATE TABLE IF NOT EXISTS test_effects (
                job_id bigint NOT NULL, attempt integer NOT NULL, worker text NOT NULL,
                at timestamptz NOT NULL DEFAULT now())
            """)
    }
}

struct RecordHandler: JobHandler {
    func run(_ args: TestHandlers.Record, job: LeasedJob, context: JobContext) async throws -> JobResult {
        if let sleep = args.sleepMilliseconds {
            let onAttempt = args.sleepOnAttempt
            if onAttempt == nil || onAttempt == job.attempt { try await Task.sleep(for: .milliseconds(sleep)) }
        }
        let (id, attempt, worker) = (job.id, job.attempt, context.workerID)
        return .done("recorded") { connection in
            try connection.query("INSERT INTO test_effects (job_id, attempt, worker) VALUES ($1, $2, $3)",
                                 [id, attempt, worker])
        }
    }
}

struct FailHandler: JobHandler {
    func run(_ args: TestHandlers.Fail, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let message = args.message ?? "test failure"
        if args.permanent == true { throw JobFailure.permanent(message) }
        throw JobFailure.retryable(message, retryAfter: args.retryAfterMilliseconds.map { .milliseconds($0) })
    }
}
