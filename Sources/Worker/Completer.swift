import Logging
import Postgres
import Queue

/// Records job outcomes by group commit (see `GroupCommit`), retrying a batch that hit a transient database
/// error; a batch that cannot be recorded leaves its jobs leased, to run again once their leases expire.
///
/// Outcomes are spread over lanes, each with exactly one flusher (the worker runs them), so group commits
/// overlap but never two of one lane. Outcomes with the same `serialKey` always take the same lane: two
/// concurrent group commits, each holding some lineages' locks and wanting one the other holds, would
/// otherwise stall each other (and every job they carry) while `LineageLock` waits, when several
/// notifications of one subscription arrive together.
struct Completer: Sendable {
    let lanes: [GroupCommit<Finish, FinishReport?>]

    init(pool: PostgresPool, owner: String, policy: RetryPolicy, lanes: Int, maxBatch: Int = 1000) {
        self.lanes = (0..<max(1, lanes)).map { _ in
            GroupCommit(maxBatch: maxBatch) { batch in
                await Self.commit(batch, pool: pool, owner: owner, policy: policy)
            }
        }
    }

    /// Records `finish` durably; nil when it could not be recorded.
    func submit(_ finish: Finish) async -> FinishReport? { await lanes[lane(of: finish)].submit(finish) }

    /// The lane for `finish`: by its serial key when it has one, else by job, which spreads them evenly.
    private func lane(of finish: Finish) -> Int {
        let spread = finish.serialKey?.hashValue ?? Int(truncatingIfNeeded: finish.lease.id)
        return Int(UInt(bitPattern: spread) % UInt(lanes.count))
    }

    private static func commit(_ batch: [Finish], pool: PostgresPool, owner: String, policy: RetryPolicy) async
        -> [FinishReport?]
    {
        let logger = Logger(component: "completer")
        var backoff = ReconnectBackoff(base: .milliseconds(50), cap: .seconds(2))
        for attempt in 1...4 {
            do {
                return try await pool.run { connection in
                    try JobQueue.finish(batch, owner: owner, policy: policy, on: connection)
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
