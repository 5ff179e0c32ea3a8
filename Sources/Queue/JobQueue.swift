import Foundation
import Postgres

/// The queue's SQL: enqueue, lease, heartbeat, release and the batched finish.
///
/// Every statement that changes a leased job is fenced on (id, attempt, owner): a worker whose lease
/// expired and was granted to someone else matches no row, so it can neither complete nor retry the job,
/// and the transaction carrying its writes rolls them back.
public struct JobQueue: Sendable {
    public let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Adds a job; returns its id, or nil when `uniqueKey` names a job that is still pending.
    @discardableResult
    public func enqueue(_ job: NewJob) async throws -> Int64? {
        try await pool.run { connection in
            try connection.query(Statements.enqueue, Self.enqueueParameters(job))
        }.first.flatMap { try $0.decodeOptional(0, as: Int64.self) }
    }

    /// Adds a job on `connection`, inside the caller's transaction.
    @discardableResult
    public static func enqueue(_ job: NewJob, on connection: isolated PostgresConnection) throws -> Int64? {
        try connection.query(Statements.enqueue, enqueueParameters(job)).first
            .flatMap { try $0.decodeOptional(0, as: Int64.self) }
    }

    /// `enqueue` for a caller inside a transaction that needs no id back: the job goes out with the transaction's
    /// next statement (or its end) instead of costing a round trip of its own.
    public static func enqueueLater(_ job: NewJob, on connection: isolated PostgresConnection) throws {
        if job.raw == nil, job.headers == nil, job.maxAttempts == nil {
            try connection.queryLater(Statements.enqueuePayload, [job.kind, job.payload, Int(job.priority), job.runAt,
                                                                  job.uniqueKey])
        } else {
            try connection.queryLater(Statements.enqueue, enqueueParameters(job))
        }
    }

    private static func enqueueParameters(_ job: NewJob) -> [any PostgresEncodable] {
        [job.kind, job.payload, job.raw, job.headers, Int(job.priority), job.runAt, job.maxAttempts, job.uniqueKey]
    }

    /// Adds many jobs of one kind in one statement, on `connection` inside the caller's transaction: a page of
    /// the daily resync's lineages costs one round trip, not one per lineage. A job whose unique key names one
    /// still pending is skipped and takes no place in the spread; the rest are due `spacing` apart in the order
    /// given, the first at `start`. Returns how many were added, and wakes idle workers when any was.
    ///
    /// `start` nil means the database's `now()`, the clock leasing compares `run_at` with: a start read off a
    /// host clock running behind would make the first minutes of the spread all due at once.
    public static func fanOut<Args: JobArgs>(_ jobs: [(args: Args, uniqueKey: String?)], priority: Int16 = 0,
                                             start: Date? = nil, spacing: Duration = .zero,
                                             on connection: isolated PostgresConnection) throws -> Int {
        guard !jobs.isEmpty else { return 0 }
        let spacingMicroseconds = spacing.components.seconds * 1_000_000 + spacing.components.attoseconds / 1_000_000_000_000
        let added = try connection.query(Statements.fanOut, [
            Args.kind, Int(priority), start, spacingMicroseconds,
            PostgresArray(try JobPayload.encode(jobs.map(\.args))), PostgresArray(jobs.map(\.uniqueKey)),
        ]).affectedRows
        if added > 0 { _ = try connection.query("SELECT pg_notify('storesync_jobs', $1)", [Args.kind]) }
        return added
    }

    /// Leases up to `limit` due jobs for `owner` in one statement: highest priority first, then oldest.
    /// A job whose previous lease ran out is among them; that lapse is recorded in its error history.
    ///
    /// Workers lease on a connection of their own with `synchronous_commit` off (see `Worker`): a lease lost
    /// in a database crash only means the job is leased again, and each completion's durable commit flushes
    /// the WAL of the lease before it anyway.
    public static func lease(owner: String, limit: Int, duration: Duration, on connection: PostgresConnection)
        async throws -> [LeasedJob]
    {
        guard limit > 0 else { return [] }
        let rows = try await connection.query(Statements.lease, [owner, limit, duration.milliseconds])
        return try rows.map { row in
            LeasedJob(
                id: try row.decode(0), kind: try row.decode(1), payload: try row.decode(2),
                raw: try row.decodeOptional(3), headers: try row.decodeOptional(4),
                priority: Int16(try row.decode(5, as: Int.self)), attempt: try row.decode(6),
                maxAttempts: try row.decode(7), createdAt: try row.decode(8), uniqueKey: try row.decodeOptional(9),
                lastError: try row.decodeOptional(10))
        }
    }

    /// Extends the leases `owner` still holds; returns the ones it no longer holds.
    ///
    /// Workers heartbeat on a connection of their own, never a pooled one: handlers and completions can hold
    /// every pooled connection for longer than a lease has left, and a lease that lapses while its job runs
    /// lets another worker repeat the job's outbound effects (its database writes stay fenced). That
    /// connection commits with `synchronous_commit` off, because waiting for a WAL flush would put the
    /// heartbeat behind the very load it must outlast, while losing its last extension in a database crash
    /// costs at most one heartbeat's margin: the extension before it, a third of a lease earlier, was flushed
    /// long since (the WAL writer flushes asynchronous commits within a second), so the lease still runs
    /// about two thirds of its duration past the crash, and the worker renews it as soon as it reconnects.
    public static func heartbeat(owner: String, leases: [LeaseRef], duration: Duration, on connection: PostgresConnection)
        async throws -> Set<LeaseRef>
    {
        guard !leases.isEmpty else { return [] }
        let rows = try await connection.query(Statements.heartbeat, [
            owner, PostgresArray(leases.map(\.id)), PostgresArray(leases.map(\.attempt)), duration.milliseconds,
        ])
        return Set(leases).subtracting(try Self.leases(rows))
    }

    /// Gives leases back unfinished (graceful shutdown): the jobs are due again at once and the attempt
    /// does not count.
    @discardableResult
    public func release(owner: String, leases: [LeaseRef]) async throws -> Int {
        guard !leases.isEmpty else { return 0 }
        return try await pool.run { connection in
            try connection.query(Statements.release, [
                owner, PostgresArray(leases.map(\.id)), PostgresArray(leases.map(\.attempt)),
            ])
        }.affectedRows
    }

    /// Records many outcomes with one commit. Each job's writes are isolated from the others', so one job's
    /// failure never undoes another's; a job whose lease is gone has its writes rolled back; writes that find
    /// their notification's receipt recorded already are rolled back, and their job reported done as `duplicate`.
    ///
    /// Isolation costs two statements and a subtransaction per job (a savepoint and its release), and almost every
    /// batch has no failure to isolate. So the batch is first written without savepoints; only if some job's
    /// writes fail is that transaction rolled back and the batch written again, each job in a savepoint of its own
    /// (`Isolation.savepoints`), where a failure is that job's alone. A write that failed before PostgreSQL saw it
    /// (its lineage busy in another process, say) is not tried a second time: its error stands for that job.
    public static func finish(_ batch: [Finish], owner: String, policy: RetryPolicy = RetryPolicy(),
                              on connection: isolated PostgresConnection) throws -> [FinishReport]
    {
        if batch.allSatisfy({ $0.writes == nil }), batch.allSatisfy({ if case .completed = $0.result { true } else { false } }) {
            // The common no-writes case: one autocommitted statement, no transaction round trips.
            return try finishGroups(batch, owner: owner, policy: policy, isolation: .none, on: connection)
        }
        do {
            return try connection.transaction { connection in
                try finishGroups(batch, owner: owner, policy: policy, isolation: .none, on: connection)
            }
        } catch let error as PostgresError where error.code == .connectionLost {
            throw error
        } catch {
            let failed = (error as? UnisolatedFailure).flatMap { $0.error is PostgresError ? nil : [$0.index: $0.error] }
            return try connection.transaction { connection in
                try finishGroups(batch, owner: owner, policy: policy, isolation: .savepoints(failed: failed ?? [:]),
                                 on: connection)
            }
        }
    }

    /// How a batch's writes are kept apart (see `finish`).
    private enum Isolation {
        /// All in the one transaction: the first failure fails the batch (`UnisolatedFailure`).
        case none
        /// Each job's in a savepoint of its own; `failed` are jobs whose writes failed already, by batch index,
        /// with the error they failed with.
        case savepoints(failed: [Int: any Error])
    }

    /// Writes that failed in a batch written without savepoints.
    private struct UnisolatedFailure: Error {
        let index: Int
        let error: any Error
    }

    /// The order a batch's writes run in: by serial key, then as submitted. Writes take their key's lock
    /// (a lineage's), and a group commit holds every lock it took until it commits; when every worker
    /// process takes them in one global order, two group commits can wait on each other's keyed locks only
    /// one way, so such a wait ends when the other commits instead of both giving up.
    private static func writingOrder(_ batch: [Finish]) -> [Int] {
        batch.indices.sorted { (batch[$0].serialKey ?? "", $0) < (batch[$1].serialKey ?? "", $1) }
    }

    private static func finishGroups(_ batch: [Finish], owner: String, policy: RetryPolicy, isolation: Isolation,
                                     on connection: isolated PostgresConnection) throws -> [FinishReport]
    {
        var reports = [FinishReport?](repeating: nil, count: batch.count)
        var results = batch.map(\.result)

        let order = writingOrder(batch)
        let writing = order.map { batch[$0] }.filter { if $0.writes != nil, case .completed = $0.result { true } else { false } }
        let held: Set<LeaseRef> = writing.isEmpty ? [] : try lockLeases(writing, owner: owner, isolation: isolation,
                                                                        on: connection)
        // A key whose writes just failed in a way worth retrying (its lineage busy in another process, say)
        // would fail the same way for the rest of the batch, each after its own wait: those are retried at once.
        var failedKeys: [String: any Error] = [:]
        for index in order {
            let finish = batch[index]
            guard let writes = finish.writes, case .completed = finish.result else { continue }
            do {
                guard held.contains(finish.lease) else { throw LeaseLost() }
                if let key = finish.serialKey, let failure = failedKeys[key] { throw failure }
                switch isolation {
                case .none:
                    do { try writes(connection) } catch { throw UnisolatedFailure(index: index, error: error) }
                case .savepoints(let failed):
                    if let failure = failed[index] { throw failure }
                    try connection.transaction { connection in try writes(connection) }
                }
            } catch let failure as UnisolatedFailure {
                throw failure
            } catch let error where NotificationReceipts.isDuplicate(error) {
                results[index] = .completed(outcome: "duplicate")
            } catch is LeaseLost {
                reports[index] = .leaseLost
                results[index] = .completed(outcome: "lease lost")
            } catch {
                if let error = error as? PostgresError, error.code == .connectionLost { throw error }
                let result = Finish.Result.after(error, attempt: finish.lease.attempt, maxAttempts: finish.maxAttempts,
                                                 policy: policy)
                results[index] = result
                if case .retry = result, let key = finish.serialKey { failedKeys[key] = error }
                let message = (error as? JobFailure)?.message ?? String(describing: error)
                switch result {
                case .retry(_, let delay): reports[index] = .writesFailed(error: message, then: .retried(after: delay))
                case .deadLetter(let reason): reports[index] = .writesFailed(error: message, then: .deadLettered(reason: reason))
                case .completed: break
                }
            }
        }

        var completed: [(Int, LeaseRef)] = []
        var retried: [(Int, LeaseRef, String, Duration)] = []
        var dead: [(Int, LeaseRef, String)] = []
        for (index, finish) in batch.enumerated() where reports[index] != .leaseLost {
            switch results[index] {
            case .completed: completed.append((index, finish.lease))
            case .retry(let error, let delay): retried.append((index, finish.lease, error, delay))
            case .deadLetter(let reason): dead.append((index, finish.lease, reason))
            }
        }

        if !completed.isEmpty {
            let done = try leases(connection.query(Statements.complete, [
                owner, PostgresArray(completed.map(\.1.id)), PostgresArray(completed.map(\.1.attempt)),
            ]))
            for (index, lease) in completed where reports[index] == nil {
                guard done.contains(lease), case .completed(let outcome) = results[index] else {
                    reports[index] = .leaseLost
                    continue
                }
                reports[index] = .completed(outcome: outcome)
            }
        }
        if !retried.isEmpty {
            let updated = try leases(connection.query(Statements.retry, [
                owner, PostgresArray(retried.map(\.1.id)), PostgresArray(retried.map(\.1.attempt)),
                PostgresArray(retried.map(\.3.milliseconds)), PostgresArray(retried.map(\.2)),
            ]))
            for (index, lease, _, delay) in retried {
                guard updated.contains(lease) else {
                    reports[index] = .leaseLost
                    continue
                }
                if reports[index] == nil { reports[index] = .retried(after: delay) }
            }
        }
        if !dead.isEmpty {
            let moved = try leases(connection.query(Statements.deadLetter, [
                owner, PostgresArray(dead.map(\.1.id)), PostgresArray(dead.map(\.1.attempt)),
                PostgresArray(dead.map(\.2)),
            ]))
            for (index, lease, reason) in dead {
                if !moved.contains(lease) {
                    reports[index] = .leaseLost
                } else if reports[index] == nil {
                    reports[index] = .deadLettered(reason: reason)
                }
            }
        }
        return reports.map { $0 ?? .leaseLost }
    }

    /// Locks the leases of the jobs that write, `writing` in writing order, and returns those still held. Without
    /// savepoints, the writes' read-aheads go in the same round trip (`Finish.readAhead`), but only for the first
    /// writes of each serial key: no earlier writes in the batch can change their answers (other keys' writes touch
    /// other lineages), while a later job of the key must read what the first wrote. A batch written again with
    /// savepoints, the rare path after a failure, sends none: a connection drops what it kept whenever a scope
    /// fails.
    private static func lockLeases(_ writing: [Finish], owner: String, isolation: Isolation,
                                   on connection: isolated PostgresConnection) throws -> Set<LeaseRef> {
        let lock = PostgresStatement(Statements.lockLeases, [
            owner, PostgresArray(writing.map(\.lease.id)), PostgresArray(writing.map(\.lease.attempt)),
        ])
        var readAheads: [PostgresReadAhead] = []
        if case .none = isolation {
            var seen = Set<String?>()
            for finish in writing where seen.insert(finish.serialKey).inserted {
                if let readAhead = finish.readAhead, readAhead.key == finish.serialKey { readAheads.append(readAhead) }
            }
        }
        let answers = try connection.query([lock] + readAheads.flatMap(\.statements))
        var next = 1
        for readAhead in readAheads {
            connection.keep(readAhead, answers: Array(answers[next..<next + readAhead.statements.count]))
            next += readAhead.statements.count
        }
        return try leases(answers[0])
    }

    /// The (id, attempt) pairs a statement touched: a batch may hold two attempts of one job, and only the
    /// one whose lease is current may be reported done.
    private static func leases(_ rows: PostgresRows) throws -> Set<LeaseRef> {
        Set(try rows.map { LeaseRef(id: try $0.decode(0), attempt: try $0.decode(1)) })
    }

    private struct LeaseLost: Error {}
}
