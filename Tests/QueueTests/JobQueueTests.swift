import Foundation
import Postgres
import Queue
import Synchronization
import TestSupport
import Testing

/// The queue's SQL contract: enqueue, lease order and exclusivity, fencing, heartbeat, release, and the
/// batched finish, whose jobs' writes are isolated from each other's failures.
@Suite struct JobQueueTests {
    private func lease(_ database: TestDatabase, owner: String, limit: Int = 10,
                       duration: Duration = .seconds(60)) async throws -> [LeasedJob] {
        let connection = try await PostgresConnection.connect(url: database.url)
        let jobs = try await JobQueue.lease(owner: owner, limit: limit, duration: duration, on: connection)
        await connection.close()
        return jobs
    }

    private func finish(_ database: TestDatabase, _ batch: [Finish], owner: String) async throws -> [FinishReport] {
        try await database.pool.withConnection { try await JobQueue.finish(batch, owner: owner, on: $0) }
    }

    /// Three leased jobs and the `test_effects` table their writes record in.
    private func threeLeasedJobs(_ database: TestDatabase) async throws -> [LeasedJob] {
        try await TestHandlers.createEffectsTable(database.pool)
        let queue = JobQueue(pool: database.pool)
        for _ in 0..<3 { try await queue.enqueue(NewJob(kind: "k")) }
        return try await lease(database, owner: "a", limit: 3)
    }

    /// Writes that record `job` in `test_effects`.
    private func recordEffect(of job: LeasedJob) -> JobWrites {
        { connection in
            try connection.query("INSERT INTO test_effects (job_id, attempt, worker) VALUES ($1, $2, 'a')", [job.id, job.attempt])
        }
    }

    private func count(_ database: TestDatabase, _ sql: String) async throws -> Int {
        try await database.pool.query(sql)[0].decode(0)
    }

    @Test func uniqueKeyMakesASecondEnqueueANoOpWhilePending() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            let first = try await queue.enqueue(NewJob(kind: "test.record", uniqueKey: "k"))
            let second = try await queue.enqueue(NewJob(kind: "test.record", uniqueKey: "k"))
            #expect(first != nil)
            #expect(second == nil)
            let leased = try await lease(database, owner: "a")
            _ = try await finish(database, [Finish(job: leased[0], result: .completed(outcome: "ok"))], owner: "a")
            #expect(try await queue.enqueue(NewJob(kind: "test.record", uniqueKey: "k")) != nil)
        }
    }

    /// A follow-up job queued inside a handler's transaction goes out as a plain INSERT, with the function's rules:
    /// a pending unique key makes it a no-op, and idle workers are woken only for a job due now, once it commits.
    @Test func aJobQueuedLaterKeepsEnqueuesRules() async throws {
        try await TestDatabase.with { database in
            let listener = try await PostgresConnection.connect(url: database.url)
            try await listener.listen("storesync_jobs")
            try await database.pool.transaction { db in
                try JobQueue.enqueueLater(NewJob(kind: "test.future", runAt: Date().addingTimeInterval(3600)), on: db)
            }
            try await database.pool.transaction { db in
                try JobQueue.enqueueLater(NewJob(kind: "test.due", payload: #"{"a": 1}"#, priority: 10, uniqueKey: "k"), on: db)
                try JobQueue.enqueueLater(NewJob(kind: "test.due", payload: #"{"a": 2}"#, uniqueKey: "k"), on: db)
            }
            var woken: [PostgresNotification] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while woken.isEmpty, ContinuousClock.now < deadline {
                woken = try await listener.waitForNotifications(timeoutMilliseconds: 200)
            }
            await listener.close()
            // In commit order: the future job's transaction, had it woken anyone, would have come first.
            #expect(woken.map { "\($0.channel) \($0.payload)" } == ["storesync_jobs test.due"])
            let rows = try await database.pool.query("""
                SELECT kind, payload::text, priority, run_at > now(), max_attempts FROM jobs ORDER BY id
                """).map { "\(try $0.decode(0, as: String.self)) \(try $0.decode(1, as: String.self)) "
                           + "\(try $0.decode(2, as: Int.self)) \(try $0.decode(3, as: Bool.self)) \(try $0.decode(4, as: Int.self))" }
            #expect(rows == ["test.future {} 0 true 25", #"test.due {"a": 1} 10 false 25"#])
        }
    }

    @Test func enqueueRejectsInvalidInput() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            await #expect(throws: PostgresError.self) { try await queue.enqueue(NewJob(kind: "Bad Kind")) }
            await #expect(throws: PostgresError.self) { try await queue.enqueue(NewJob(kind: "ok", payload: "{not json")) }
            let stored = try await count(database, "SELECT count(*) FROM jobs")
            #expect(stored == 0)
        }
    }

    @Test func leaseTakesHighestPriorityThenOldestAndSkipsFutureJobs() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            let past = Date().addingTimeInterval(-60)
            let low = try await queue.enqueue(NewJob(kind: "k", priority: -10, runAt: past))
            let oldNormal = try await queue.enqueue(NewJob(kind: "k", runAt: past.addingTimeInterval(-10)))
            let newNormal = try await queue.enqueue(NewJob(kind: "k", runAt: past))
            let urgent = try await queue.enqueue(NewJob(kind: "k", priority: 10, runAt: past))
            _ = try await queue.enqueue(NewJob(kind: "k", priority: 100, runAt: Date().addingTimeInterval(3600)))
            let leased = try await lease(database, owner: "a", limit: 10)
            #expect(leased.map(\.id) == [urgent, oldNormal, newNormal, low].compactMap { $0 })
            #expect(leased.allSatisfy { $0.attempt == 1 })
            #expect(try await lease(database, owner: "b").isEmpty)
        }
    }

    /// The lease walks the priorities present, highest first, and stops once it holds its limit — part-way
    /// through a priority when it must — while jobs in flight and jobs not yet due are passed over.
    @Test func aLeaseFillsItsLimitAcrossPrioritiesInOrder() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            let past = Date().addingTimeInterval(-60)
            var ids: [String: Int64] = [:]
            for (name, priority, age) in [("u1", 10, 2.0), ("u2", 10, 1.0), ("n1", 0, 3.0), ("n2", 0, 2.0), ("n3", 0, 1.0),
                                          ("l1", -10, 2.0), ("l2", -10, 1.0)] {
                ids[name] = try await queue.enqueue(NewJob(kind: "k", priority: Int16(priority),
                                                           runAt: past.addingTimeInterval(-age)))
            }
            for offset in 1...50 {
                _ = try await queue.enqueue(NewJob(kind: "k", priority: 5, runAt: Date().addingTimeInterval(Double(offset) * 60)))
            }
            let first = try await lease(database, owner: "a", limit: 4)
            #expect(first.map(\.id) == ["u1", "u2", "n1", "n2"].compactMap { ids[$0] })
            let second = try await lease(database, owner: "b", limit: 10)
            #expect(second.map(\.id) == ["n3", "l1", "l2"].compactMap { ids[$0] })
            #expect(try await lease(database, owner: "c", limit: 10).isEmpty)
        }
    }

    @Test func concurrentLeasesNeverShareAJob() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await database.pool.query("INSERT INTO jobs (kind) SELECT 'k' FROM generate_series(1, 2000)")
            let batches = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var mine: [Int64] = []
                        while true {
                            let got = try await lease(database, owner: "w\(worker)", limit: 37)
                            if got.isEmpty { return mine }
                            mine += got.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [[Int64]]()) { $0.append($1) }
            }
            let all = batches.flatMap { $0 }
            #expect(all.count == 2000)
            #expect(Set(all).count == 2000)
        }
    }

    @Test func expiredLeaseIsLeasedAgainAndTheStaleWorkerIsFencedOut() async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: "k"))
            let stale = try await lease(database, owner: "stale", duration: .zero)
            #expect(stale.count == 1)
            let fresh = try await lease(database, owner: "fresh")
            #expect(fresh.map(\.id) == stale.map(\.id))
            #expect(fresh[0].attempt == 2)

            let write: JobWrites = { connection in
                try connection.query("INSERT INTO test_effects (job_id, attempt, worker) VALUES (1, 1, 'stale')")
            }
            let staleReport = try await finish(database, [Finish(job: stale[0], result: .completed(outcome: "ok"), writes: write)],
                                               owner: "stale")
            #expect(staleReport == [.leaseLost])
            #expect(try await count(database, "SELECT count(*) FROM test_effects") == 0)
            let retryReport = try await finish(database, [Finish(job: stale[0], result: .retry(error: "x", after: .zero))],
                                               owner: "stale")
            #expect(retryReport == [.leaseLost])

            let freshReport = try await finish(database, [Finish(job: fresh[0], result: .completed(outcome: "ok"))], owner: "fresh")
            #expect(freshReport == [.completed(outcome: "ok")])
            #expect(try await count(database, "SELECT count(*) FROM jobs") == 0)
        }
    }

    /// The fence is the (id, attempt) pair, not the owner alone: one worker that took a job again after its
    /// own lease expired may finish both attempts in one batch, and only the current one counts — its writes
    /// run and it completes, whichever of the two comes first.
    @Test(arguments: [false, true])
    func aStaleAttemptOfTheSameWorkerIsFencedOutWithinABatch(staleFirst: Bool) async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            let queue = JobQueue(pool: database.pool)
            try await queue.enqueue(NewJob(kind: "k"))
            let expired = try #require(try await lease(database, owner: "w", limit: 1, duration: .zero).first)
            try await queue.enqueue(NewJob(kind: "k"))
            let current = try await lease(database, owner: "w")
            let retaken = try #require(current.first { $0.id == expired.id })
            let other = try #require(current.first { $0.id != expired.id })
            #expect((expired.attempt, retaken.attempt, other.attempt) == (1, 2, 1))

            let stale = Finish(job: expired, result: .completed(outcome: "old"), writes: recordEffect(of: expired))
            let fresh = Finish(job: retaken, result: .completed(outcome: "ok"), writes: recordEffect(of: retaken))
            let neighbour = Finish(job: other, result: .completed(outcome: "ok"), writes: recordEffect(of: other))
            let batch = staleFirst ? [stale, neighbour, fresh] : [fresh, neighbour, stale]
            let report = try await finish(database, batch, owner: "w")
            #expect(report == (staleFirst ? [.leaseLost, .completed(outcome: "ok"), .completed(outcome: "ok")]
                                          : [.completed(outcome: "ok"), .completed(outcome: "ok"), .leaseLost]))
            let effects = try await database.pool.query("SELECT job_id, attempt FROM test_effects ORDER BY job_id")
                .map { [try $0.decode(0, as: Int64.self), try $0.decode(1, as: Int64.self)] }
            #expect(effects == [[expired.id, 2], [other.id, 1]].sorted { $0[0] < $1[0] })
            #expect(try await count(database, "SELECT count(*) FROM jobs") == 0)
        }
    }

    /// A retry or a dead letter of a stale attempt in the same batch as the current one is fenced out too.
    @Test func aStaleAttemptsRetryDoesNotDisplaceTheCurrentOutcome() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            try await queue.enqueue(NewJob(kind: "k"))
            let expired = try #require(try await lease(database, owner: "w", limit: 1, duration: .zero).first)
            let retaken = try #require(try await lease(database, owner: "w").first)
            let report = try await finish(database, [
                Finish(job: expired, result: .retry(error: "old", after: .zero)),
                Finish(job: retaken, result: .deadLetter(reason: "product P is not mapped")),
            ], owner: "w")
            #expect(report == [.leaseLost, .deadLettered(reason: "product P is not mapped")])
            #expect(try await count(database, "SELECT count(*) FROM dead_letters") == 1)
        }
    }

    @Test func expiredLeaseIsRecordedInTheErrorHistory() async throws {
        try await TestDatabase.with { database in
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: "k"))
            _ = try await lease(database, owner: "crashed", duration: .zero)
            _ = try await lease(database, owner: "next")
            let errors = try await database.pool.query("SELECT errors::text, last_error FROM jobs")[0]
            #expect(try errors.decode(0, as: String.self).contains("\"worker\": \"crashed\""))
            #expect(try errors.decode(1, as: String.self).contains("lease expired"))
        }
    }

    @Test func heartbeatExtendsOnlyLeasesStillHeld() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            try await queue.enqueue(NewJob(kind: "k"))
            try await queue.enqueue(NewJob(kind: "k"))
            let mine = try await lease(database, owner: "a", limit: 2, duration: .seconds(5))
            let stolen = LeaseRef(id: mine[1].id, attempt: mine[1].attempt + 1)
            let connection = try await PostgresConnection.connect(url: database.url)
            let lost = try await JobQueue.heartbeat(owner: "a", leases: [mine[0].lease, stolen], duration: .seconds(600),
                                                    on: connection)
            await connection.close()
            #expect(lost == [stolen])
            let remaining = try await database.pool.query(
                "SELECT extract(epoch FROM lease_deadline - now())::float8 FROM jobs WHERE id = $1", [mine[0].id])
            #expect(try remaining[0].decode(0, as: Double.self) > 500)
        }
    }

    @Test func releaseMakesJobsDueAtOnceWithoutSpendingAnAttempt() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            try await queue.enqueue(NewJob(kind: "k"))
            let leased = try await lease(database, owner: "a")
            #expect(try await queue.release(owner: "a", leases: leased.map(\.lease)) == 1)
            let again = try await lease(database, owner: "b")
            #expect(again.map(\.id) == leased.map(\.id))
            #expect(again[0].attempt == 1)
        }
    }

    /// The delay is counted from the database's `now()` (the retry statement's, which it also records in the
    /// error history), not from this host's clock, which the lease query never consults.
    @Test func retryRecordsTheErrorAndRunsAgainAfterTheDelayOnTheDatabaseClock() async throws {
        try await TestDatabase.with { database in
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: "k"))
            let leased = try await lease(database, owner: "a")
            let delay = Duration.milliseconds(300_250)
            let report = try await finish(database, [Finish(job: leased[0], result: .retry(error: "HTTP 503", after: delay))],
                                          owner: "a")
            #expect(report == [.retried(after: delay)])
            let row = try await database.pool.query("""
                SELECT extract(epoch FROM run_at - (errors -> 0 ->> 'at')::timestamptz)::float8,
                       attempt, lease_owner, last_error, jsonb_array_length(errors)
                FROM jobs
                """)[0]
            #expect(abs(try row.decode(0, as: Double.self) - delay.seconds) < 0.000_001)
            #expect(try row.decode(1, as: Int.self) == 1)
            #expect(try row.decodeOptional(2, as: String.self) == nil)
            #expect(try row.decode(3, as: String.self) == "HTTP 503")
            #expect(try row.decode(4, as: Int.self) == 1)
            #expect(try await lease(database, owner: "a").isEmpty)
        }
    }

    @Test func deadLetterKeepsPayloadRawHeadersAndEveryError() async throws {
        try await TestDatabase.with { database in
            let raw = Data([0, 1, 2, 255]) + Data(#"{"signedPayload":"a\\b"}"#.utf8) + Data(UInt8.min...UInt8.max)
            try await JobQueue(pool: database.pool).enqueue(NewJob(
                kind: "k", payload: "{\"a\": 1}", raw: raw, headers: "{\"authorization\": \"Bearer x\"}", maxAttempts: 3))
            let first = try await lease(database, owner: "a")
            #expect(first.first?.raw == raw)
            _ = try await finish(database, [Finish(job: first[0], result: .retry(error: "timeout", after: .zero))], owner: "a")
            let second = try await lease(database, owner: "b")
            let report = try await finish(database, [Finish(job: second[0], result: .deadLetter(reason: "product P is not mapped"))],
                                          owner: "b")
            #expect(report == [.deadLettered(reason: "product P is not mapped")])
            let detail = try #require(try await DeadLetters(pool: database.pool).show(id: first[0].id))
            #expect(detail.raw == raw)
            #expect(detail.payload == "{\"a\": 1}")
            #expect(detail.headers == "{\"authorization\": \"Bearer x\"}")
            #expect(detail.entry.attempts == 2)
            #expect(detail.entry.reason == "product P is not mapped")
            #expect(detail.errors.contains("timeout") && detail.errors.contains("\"worker\": \"b\""))
            #expect(try await count(database, "SELECT count(*) FROM jobs") == 0)
        }
    }

    /// Every worker process takes a batch's locks in one order (serial key, then submission), so two group
    /// commits never each hold a lock the other waits for.
    @Test func writesRunInSerialKeyOrderThenAsSubmitted() async throws {
        try await TestDatabase.with { database in
            try await database.pool.query("CREATE TABLE write_order (n bigserial PRIMARY KEY, job_id bigint NOT NULL)")
            let queue = JobQueue(pool: database.pool)
            for _ in 0..<5 { try await queue.enqueue(NewJob(kind: "k")) }
            let jobs = try await lease(database, owner: "a", limit: 5)
            func record(_ job: LeasedJob) -> JobWrites {
                { connection in
                    try connection.query("INSERT INTO write_order (job_id) VALUES ($1)", [job.id])
                }
            }
            let keys: [String?] = ["lineage:b", nil, "lineage:a", "lineage:b", "lineage:a"]
            let batch = zip(jobs, keys).map { job, key in
                Finish(job: job, result: .completed(outcome: "ok"), writes: record(job), serialKey: key)
            }
            let reports = try await finish(database, batch, owner: "a")
            #expect(reports.allSatisfy { $0 == .completed(outcome: "ok") })
            let order = try await database.pool.query("SELECT job_id FROM write_order ORDER BY n")
                .map { try $0.decode(0, as: Int64.self) }
            #expect(order == [jobs[1].id, jobs[2].id, jobs[4].id, jobs[0].id, jobs[3].id])
        }
    }

    /// A key whose writes failed with something worth retrying (a lineage busy elsewhere) is not tried again
    /// in the same batch: its later jobs retry at once instead of each waiting on the same lock.
    @Test func aKeyWhoseWritesFailedRetryablyIsNotTriedAgainInTheBatch() async throws {
        try await TestDatabase.with { database in
            let jobs = try await threeLeasedJobs(database)
            let busy: JobWrites = { _ in throw JobFailure.retryable("lineage X is busy") }
            let reports = try await finish(database, [
                Finish(job: jobs[0], result: .completed(outcome: "ok"), writes: busy, serialKey: "lineage:x"),
                Finish(job: jobs[1], result: .completed(outcome: "ok"), writes: recordEffect(of: jobs[1]), serialKey: "lineage:x"),
                Finish(job: jobs[2], result: .completed(outcome: "ok"), writes: recordEffect(of: jobs[2]), serialKey: "lineage:y"),
            ], owner: "a")
            for report in reports.prefix(2) {
                guard case .writesFailed("lineage X is busy", .retried) = report else {
                    Issue.record("expected a retry for lineage X's job, got \(report)")
                    continue
                }
            }
            #expect(reports[2] == .completed(outcome: "ok"))
            let effects = try await database.pool.query("SELECT job_id FROM test_effects").map { try $0.decode(0, as: Int64.self) }
            #expect(effects == [jobs[2].id])
            #expect(try await count(database, "SELECT count(*) FROM jobs WHERE attempt = 1 AND lease_owner IS NULL") == 2)
        }
    }

    /// Writes see what their handler could not (a receipt a concurrent delivery committed meanwhile): writes that
    /// find their notification's receipt recorded already are rolled back, and only their own job is reported as
    /// the duplicate.
    @Test func writesFindingTheirReceiptRecordedCompleteAsDuplicates() async throws {
        try await TestDatabase.with { database in
            let jobs = try await threeLeasedJobs(database)
            let received = Date()
            let firstDelivery = try await database.pool.query("""
                INSERT INTO notification_receipts (store, scope, message_id, received_at, processed_at, outcome)
                VALUES ('apple', '', 'uuid-1', $1, now(), 'mirrored')
                """, [received])
            #expect(firstDelivery.affectedRows == 1)
            let redelivery: JobWrites = { connection in
                try NotificationReceipts.record(store: "apple", scope: "", messageID: "uuid-1", receivedAt: received, jobID: jobs[0].id,
                                                outcome: "mirrored", on: connection)
                try connection.query("INSERT INTO test_effects (job_id, attempt, worker) VALUES ($1, $2, 'a')",
                                     [jobs[0].id, jobs[0].attempt])
            }
            let reports = try await finish(database, [
                Finish(job: jobs[0], result: .completed(outcome: "mirrored"), writes: redelivery),
                Finish(job: jobs[1], result: .completed(outcome: "mirrored"), writes: recordEffect(of: jobs[1])),
                Finish(job: jobs[2], result: .completed(outcome: "mirrored")),
            ], owner: "a")
            #expect(reports == [.completed(outcome: "duplicate"), .completed(outcome: "mirrored"),
                                .completed(outcome: "mirrored")])
            let effects = try await database.pool.query("SELECT job_id FROM test_effects").map { try $0.decode(0, as: Int64.self) }
            #expect(effects == [jobs[1].id])
            #expect(try await count(database, "SELECT count(*) FROM jobs") == 0)
        }
    }

    /// A batch is written without savepoints first; a failure sends it back to be written with one a job. A failure
    /// PostgreSQL never saw stands for its job then, so those writes run once; the others commit once.
    @Test func oneJobsFailingWritesNeverUndoAnothers() async throws {
        try await TestDatabase.with { database in
            let jobs = try await threeLeasedJobs(database)
            let runs = Mutex(0)
            let failing: JobWrites = { connection in
                runs.withLock { $0 += 1 }
                try connection.query("INSERT INTO test_effects (job_id, attempt, worker) VALUES (-1, 1, 'a')")
                throw JobFailure.permanent("product X is not mapped")
            }
            let reports = try await finish(database, [
                Finish(job: jobs[0], result: .completed(outcome: "ok"), writes: recordEffect(of: jobs[0])),
                Finish(job: jobs[1], result: .completed(outcome: "ok"), writes: failing),
                Finish(job: jobs[2], result: .completed(outcome: "ok"), writes: recordEffect(of: jobs[2])),
            ], owner: "a")
            #expect(reports[0] == .completed(outcome: "ok"))
            #expect(reports[1] == .writesFailed(error: "product X is not mapped",
                                                then: .deadLettered(reason: "product X is not mapped")))
            #expect(reports[2] == .completed(outcome: "ok"))
            #expect(runs.withLock { $0 } == 1)
            let effects = try await database.pool.query("SELECT job_id FROM test_effects ORDER BY job_id")
                .map { try $0.decode(0, as: Int64.self) }
            #expect(effects == [jobs[0].id, jobs[2].id])
            #expect(try await count(database, "SELECT count(*) FROM dead_letters") == 1)
        }
    }

    /// A deferred statement fails with whatever statement next goes out — without savepoints, the next job's. The
    /// failure is still its own job's alone.
    @Test func aDeferredStatementsFailureIsItsOwnJobs() async throws {
        try await TestDatabase.with { database in
            let jobs = try await threeLeasedJobs(database)
            let failingLater: JobWrites = { connection in
                try connection.queryLater("INSERT INTO test_effects (job_id, attempt, worker) VALUES (NULL, 1, 'a')")
            }
            let reports = try await finish(database, [
                Finish(job: jobs[0], result: .completed(outcome: "ok"), writes: failingLater),
                Finish(job: jobs[1], result: .completed(outcome: "ok"), writes: recordEffect(of: jobs[1])),
                Finish(job: jobs[2], result: .completed(outcome: "ok"), writes: recordEffect(of: jobs[2])),
            ], owner: "a")
            guard case .writesFailed(let error, .retried) = reports[0] else {
                Issue.record("expected the first job's writes to fail and be retried, got \(reports[0])")
                return
            }
            #expect(error.contains("test_effects"), "\(error)")
            #expect(Array(reports.dropFirst()) == [.completed(outcome: "ok"), .completed(outcome: "ok")])
            let effects = try await database.pool.query("SELECT job_id FROM test_effects ORDER BY job_id")
                .map { try $0.decode(0, as: Int64.self) }
            #expect(effects == [jobs[1].id, jobs[2].id])
        }
    }

    /// Read-aheads go with the leases' lock; the first writes of each serial key take their answers, while later
    /// writes of a key (whose state earlier writes may have changed) get none, nor does a batch written again with
    /// savepoints.
    @Test func theFirstWritesOfEachKeyTakeTheirReadAheadsAnswers() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            for _ in 0..<4 { try await queue.enqueue(NewJob(kind: "k")) }
            let jobs = try await lease(database, owner: "a", limit: 4)
            let taken = Mutex<[String]>([])
            @Sendable func readAhead(_ key: String) -> PostgresReadAhead {
                PostgresReadAhead(key: key, statements: [PostgresStatement("SELECT $1::text", [key])])
            }
            func writes(_ key: String) -> JobWrites {
                { connection in
                    let answer: String? = try connection.takeAnswers(to: readAhead(key).statements, key: key)?[0][0].decode(0)
                    taken.withLock { $0.append("\(key):\(answer ?? "none")") }
                }
            }
            let failing: JobWrites = { connection in
                try connection.query("SELECT 1")
                throw JobFailure.permanent("product X is not mapped")
            }
            let reports = try await finish(database, [
                Finish(job: jobs[0], result: .completed(outcome: "ok"), writes: writes("b"), serialKey: "b", readAhead: readAhead("b")),
                Finish(job: jobs[1], result: .completed(outcome: "ok"), writes: writes("a"), serialKey: "a", readAhead: readAhead("a")),
                Finish(job: jobs[2], result: .completed(outcome: "ok"), writes: writes("a"), serialKey: "a", readAhead: readAhead("a")),
                Finish(job: jobs[3], result: .completed(outcome: "ok"), writes: writes("c"), serialKey: "c"),
            ], owner: "a")
            #expect(reports.allSatisfy { $0 == .completed(outcome: "ok") })
            #expect(taken.withLock { $0 } == ["a:a", "a:none", "b:b", "c:none"])

            for _ in 0..<2 { try await queue.enqueue(NewJob(kind: "k")) }
            let more = try await lease(database, owner: "a", limit: 2)
            taken.withLock { $0.removeAll() }
            let rerun = try await finish(database, [
                Finish(job: more[0], result: .completed(outcome: "ok"), writes: writes("a"), serialKey: "a", readAhead: readAhead("a")),
                Finish(job: more[1], result: .completed(outcome: "ok"), writes: failing, serialKey: "b"),
            ], owner: "a")
            #expect(rerun[0] == .completed(outcome: "ok"))
            // Written once without savepoints, then again with them after the other job's writes failed.
            #expect(taken.withLock { $0 } == ["a:a", "a:none"])
        }
    }

    struct FannedOut: JobArgs {
        static let kind: JobKind = "test.fan-out"
        let index: Int
    }

    /// The daily resync's shape: one statement; a key still pending is skipped and leaves no gap in the spread.
    @Test func aFanOutSkipsPendingKeysAndSpreadsTheRestFromItsStart() async throws {
        try await TestDatabase.with { database in
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: FannedOut.kind.name, uniqueKey: "fan:1"))
            let start = Date(timeIntervalSince1970: 1_795_960_800)
            let jobs = (0..<4).map { (args: FannedOut(index: $0), uniqueKey: Optional("fan:\($0)")) }
                + [(args: FannedOut(index: 9), uniqueKey: nil)]
            let added = try await database.pool.transaction { db in
                try JobQueue.fanOut(jobs, priority: -10, start: start, spacing: .milliseconds(250), on: db)
            }
            #expect(added == 4)
            let rows = try await database.pool.query("""
                SELECT (payload->>'index')::int, priority, extract(epoch FROM run_at)::float8, unique_key FROM jobs
                WHERE payload ? 'index' ORDER BY run_at
                """).map { "\(try $0.decode(0, as: Int.self)) \(try $0.decode(1, as: Int.self)) "
                           + "\(try $0.decode(2, as: Double.self) - start.timeIntervalSince1970) \(try $0.decodeOptional(3, as: String.self) ?? "-")" }
            #expect(rows == ["0 -10 0.0 fan:0", "2 -10 0.25 fan:2", "3 -10 0.5 fan:3", "9 -10 0.75 -"])
            let again = try await database.pool.transaction { db in
                try JobQueue.fanOut(Array(jobs.prefix(4)), start: start, on: db)
            }
            #expect(again == 0)
        }
    }

    /// Without a start, the spread begins at the database's `now()`, the clock leasing compares `run_at` with.
    @Test func aFanOutWithoutAStartBeginsAtTheDatabasesClock() async throws {
        try await TestDatabase.with { database in
            let (added, now) = try await database.pool.transaction { db in
                (try JobQueue.fanOut([(args: FannedOut(index: 0), uniqueKey: "fan:0")], on: db),
                 try db.query("SELECT now()")[0].decode(0, as: Date.self))
            }
            #expect(added == 1)
            let runAt: Date = try await database.pool.query("SELECT run_at FROM jobs")[0].decode(0)
            #expect(runAt == now)
            #expect(try await database.pool.query("SELECT payload::text FROM jobs")[0].decode(0, as: String.self)
                    == #"{"index": 0}"#)
        }
    }
}
