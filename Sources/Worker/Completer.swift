import Logging
import Postgres
import Queue

/// Records job outcomes by group commit (see `GroupCommit`), retrying a batch that hit a transient database
/// error; a batch that cannot be recorded leaves its jobs leased, to run again once their leases expire.
struct Completer: Sendable {
    let commits: GroupCommit<Finish, FinishReport?>

    init(pool: PostgresPool, owner: String, policy: RetryPolicy, maxBatch: Int = 1000) {
        commits = GroupCommit(maxBatch: maxBatch) { batch in
            await Self.commit(batch, pool: pool, owner: owner, policy: policy)
        }
    }

    /// Records `finish` durably; nil when it could not be recorded.
    func submit(_ finish: Finish) async -> FinishReport? { await commits.submit(finish) }

    private static func commit(_ batch: [Finish], pool: PostgresPool, owner: String, policy: RetryPolicy) async
        -> [FinishReport?]
    {
        let logger = Logger(component: "completer")
        var backoff = ReconnectBackoff(base: .milliseconds(50), cap: .seconds(2))
        for attempt in 1...4 {
            do {
                return try await pool.withConnection { connection in
                    try await JobQueue.finish(batch, owner: owner, policy: policy, on: connection)
                }
            } catch let error as PostgresError where error.isTransient && attempt < 4 {
                logger.warning("recording job outcomes failed; trying again", [
                    "jobs": .int(batch.count), "error": .string(error.description), "attempt": .int(attempt),
                ])
                try? await Task.sleep(for: backoff.recordFailure())
            } catch {
                logger.error("could not record job outcomes; the jobs run again when their leases expire", [
                    "jobs": .int(batch.count), "error": .string("\(error)"),
                ])
                break
            }
        }
        return Array(repeating: nil, count: batch.count)
    }
}
