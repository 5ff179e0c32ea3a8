import Logging
import Postgres
import Queue

/// Group commit for job outcomes.
///
/// A commit per job caps a queue at the disk's fsync rate. Outcomes submitted while a commit is in flight
/// wait and go together in the next one, so under load one durable commit records hundreds of jobs and
/// when idle a single job commits at once, with no artificial delay. `flushers` commits overlap.
actor Completer {
    private var buffer: [(finish: Finish, reply: CheckedContinuation<FinishReport?, Never>)] = []
    private var idleFlushers: [CheckedContinuation<Void, Never>] = []
    private var closed = false
    private let pool: PostgresPool
    private let owner: String
    private let policy: RetryPolicy
    private let maxBatch: Int
    private let logger = Logger(component: "completer")

    init(pool: PostgresPool, owner: String, policy: RetryPolicy, maxBatch: Int = 1000) {
        self.pool = pool
        self.owner = owner
        self.policy = policy
        self.maxBatch = maxBatch
    }

    /// Records `finish` durably; returns what happened, or nil when it could not be recorded (the database
    /// stayed unreachable) — the job then stays leased and runs again once its lease expires.
    func submit(_ finish: Finish) async -> FinishReport? {
        await withCheckedContinuation { reply in
            buffer.append((finish, reply))
            if !idleFlushers.isEmpty { idleFlushers.removeFirst().resume() }
        }
    }

    /// Runs one flusher until `close()` and the buffer is empty.
    func runFlusher() async {
        while true {
            if buffer.isEmpty {
                if closed { return }
                await withCheckedContinuation { idleFlushers.append($0) }
                continue
            }
            let batch = Array(buffer.prefix(maxBatch))
            buffer.removeFirst(batch.count)
            let reports = await commit(batch.map(\.finish))
            for (entry, report) in zip(batch, reports) { entry.reply.resume(returning: report) }
        }
    }

    /// Lets the flushers finish what is buffered and return.
    func close() {
        closed = true
        for flusher in idleFlushers { flusher.resume() }
        idleFlushers.removeAll()
    }

    private func commit(_ batch: [Finish]) async -> [FinishReport?] {
        var backoff = ReconnectBackoff(base: .milliseconds(50), cap: .seconds(2))
        for attempt in 1...4 {
            do {
                let (owner, policy) = (owner, policy)
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
