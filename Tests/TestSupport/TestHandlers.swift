import Foundation
import Postgres
import Queue
import Worker

/// Job kinds that exist only in tests, shared by in-process tests and the `storesync-testworker` binary.
public enum TestHandlers {
    /// `test.record`: optionally sleeps (`sleep_ms`, only on attempt `sleep_on_attempt` when given), then
    /// records one `test_effects` row in the completion's transaction — so counting rows counts effects.
    public static let record = "test.record"
    /// `test.fail`: fails with `message`; `permanent: true` dead-letters, `retry_after_ms` gives a hint.
    public static let fail = "test.fail"

    public static func registry() -> HandlerRegistry {
        var registry = HandlerRegistry()
        registry.register(record, RecordHandler())
        registry.register(fail, FailHandler())
        return registry
    }

    /// The table `test.record` writes to; create it before starting workers.
    public static func createEffectsTable(_ pool: PostgresPool) async throws {
        try await pool.query("""
            CREATE TABLE IF NOT EXISTS test_effects (
                job_id bigint NOT NULL, attempt integer NOT NULL, worker text NOT NULL,
                at timestamptz NOT NULL DEFAULT now())
            """)
    }

    static func object(_ payload: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any] ?? [:]
    }
}

struct RecordHandler: JobHandler {
    func run(_ job: LeasedJob, context: JobContext) async throws -> JobResult {
        let payload = TestHandlers.object(job.payload)
        if let sleep = payload["sleep_ms"] as? Int {
            let onAttempt = payload["sleep_on_attempt"] as? Int
            if onAttempt == nil || onAttempt == job.attempt { try await Task.sleep(for: .milliseconds(sleep)) }
        }
        let (id, attempt, worker) = (job.id, job.attempt, context.workerID)
        return .done("recorded") { connection in
            try connection.query("INSERT INTO test_effects (job_id, attempt, worker) VALUES ($1, $2, $3)",
                                 [id, attempt, worker])
            return nil
        }
    }
}

struct FailHandler: JobHandler {
    func run(_ job: LeasedJob, context: JobContext) async throws -> JobResult {
        let payload = TestHandlers.object(job.payload)
        let message = payload["message"] as? String ?? "test failure"
        if payload["permanent"] as? Bool == true { throw JobFailure.permanent(message) }
        throw JobFailure.retryable(message, retryAfter: (payload["retry_after_ms"] as? Int).map { .milliseconds($0) })
    }
}
