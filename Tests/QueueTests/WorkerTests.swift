import Foundation
import Postgres
import Queue
import TestSupport
import Testing
import Worker

/// The worker in-process: NOTIFY wake-ups, graceful shutdown, retries and dead letters through the real
/// lease / run / group-commit path.
@Suite struct WorkerTests {
    /// A job that runs until it is cancelled, standing in for a slow store call.
    struct BlockingHandler: JobHandler {
        struct Args: JobArgs {
            static let kind: JobKind = "test.block"
        }

        func run(_ args: Args, job: LeasedJob, context: JobContext) async throws -> JobResult {
            try await Task.sleep(for: .seconds(3600))
            return .done()
        }
    }

    /// Writes that must not wait for another transaction: they take their payload's key with a try-lock,
    /// fail when someone else holds it, and hold it a moment, as `Mirror.apply` holds a lineage.
    struct KeyedWritesHandler: JobHandler {
        struct Args: JobArgs {
            static let kind: JobKind = "test.keyed"
            let key: String
        }

        func run(_ args: Args, job: LeasedJob, context: JobContext) async throws -> JobResult {
            let key = args.key
            return .done(writes: { db in
                guard try db.query("SELECT pg_try_advisory_xact_lock(hashtext($1))", [key])[0].decode(0, as: Bool.self)
                else { throw JobFailure.retryable("\(key) is locked by another transaction") }
                try db.query("SELECT pg_sleep(0.005)")
                try db.query("INSERT INTO test_effects (job_id, attempt, worker) VALUES ($1, $2, $3)",
                             [job.id, job.attempt, key])
            }, serialKey: key)
        }
    }

    private func startWorker(_ database: TestDatabase, configure: (inout WorkerConfiguration) -> Void = { _ in })
        -> (Worker, Task<Void, Never>)
    {
        var configuration = WorkerConfiguration()
        configuration.concurrency = 4
        configuration.pollInterval = .milliseconds(50)
        configure(&configuration)
        var handlers = TestHandlers.all()
        handlers.register(BlockingHandler())
        handlers.register(KeyedWritesHandler())
        let worker = Worker(configuration: configuration, handlers: handlers, pool: database.pool, listenURL: database.url)
        return (worker, Task { await worker.run() })
    }

    private func count(_ database: TestDatabase, _ sql: String, _ parameters: [any PostgresEncodable] = []) async throws -> Int {
        try await database.pool.query(sql, parameters)[0].decode(0)
    }

    @Test func notifyWakesAnIdleWorkerLongBeforeItsPollInterval() async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            let (worker, running) = startWorker(database) { $0.pollInterval = .seconds(120) }
            try await eventually("the worker's LISTEN connection to appear") {
                try await count(database, """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = $1 AND application_name = 'storesync-listener' AND query LIKE 'LISTEN%'
                    """, [database.name]) == 1
            }
            let enqueued = ContinuousClock.now
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: TestHandlers.record))
            try await eventually("the job to run after its NOTIFY", timeout: .seconds(20)) {
                try await count(database, "SELECT count(*) FROM test_effects") == 1
            }
            #expect(ContinuousClock.now - enqueued < .seconds(20))
            worker.stop()
            await running.value
        }
    }

    @Test func gracefulShutdownReleasesUnfinishedJobsWithoutSpendingAttempts() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            for _ in 0..<2 { try await queue.enqueue(NewJob(kind: "test.block")) }
            let (worker, running) = startWorker(database) { $0.gracePeriod = .milliseconds(200) }
            try await eventually("both jobs to be leased") {
                try await count(database, "SELECT count(*) FROM jobs WHERE lease_owner IS NOT NULL") == 2
            }
            worker.stop()
            await running.value
            let rows = try await database.pool.query("SELECT attempt, lease_owner, lease_deadline FROM jobs")
            #expect(rows.count == 2)
            for row in rows {
                #expect(try row.decode(0, as: Int.self) == 0)
                #expect(try row.decodeOptional(1, as: String.self) == nil)
                #expect(try row.decodeOptional(2, as: Date.self) == nil)
            }
        }
    }

    @Test func shutdownLetsJobsFinishWithinTheGracePeriod() async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            let (worker, running) = startWorker(database) { $0.gracePeriod = .seconds(30) }
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: TestHandlers.record, payload: "{\"sleep_ms\": 300}"))
            try await eventually("the job to be leased") {
                try await count(database, "SELECT count(*) FROM jobs WHERE lease_owner IS NOT NULL") == 1
            }
            worker.stop()
            await running.value
            #expect(try await count(database, "SELECT count(*) FROM test_effects") == 1)
            #expect(try await count(database, "SELECT count(*) FROM jobs") == 0)
        }
    }

    /// Several jobs whose writes lock the same thing, finished together: their outcomes share a flusher, so
    /// concurrent group commits never contend for the lock and every job commits on its first attempt.
    @Test func outcomesWithTheSameSerialKeyNeverContendAcrossGroupCommits() async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            let queue = JobQueue(pool: database.pool)
            let keys = ["lineage-a", "lineage-b"]
            for index in 0..<60 {
                try await queue.enqueue(try NewJob(KeyedWritesHandler.Args(key: keys[index % keys.count])))
            }
            let (worker, running) = startWorker(database) {
                $0.concurrency = 60
                $0.completionFlushers = 3
            }
            try await eventually("all 60 jobs to finish", timeout: .seconds(60)) {
                try await count(database, "SELECT count(*) FROM jobs") == 0
            }
            worker.stop()
            await running.value
            #expect(try await count(database, "SELECT count(*) FROM test_effects") == 60)
            #expect(try await count(database, "SELECT count(*) FROM test_effects WHERE attempt > 1") == 0)
        }
    }

    /// Handlers and completions share the pool; the heartbeat must not. With every pooled connection held
    /// elsewhere for longer than a lease lasts, a running job's lease is still renewed and never lapses.
    @Test func leasesAreRenewedWhileEveryPooledConnectionIsHeld() async throws {
        try await TestDatabase.with { database in
            let (worker, running, probe) = try await startBlockedJob(database)
            try await eventually("the job to be leased") { try await leaseDeadline(on: probe) != nil }

            let poolSize = database.pool.configuration.poolSize
            let release = Gate()
            let holding = Counter()
            let holders = (0..<poolSize).map { _ in
                Task {
                    try await database.pool.withConnection { _ in
                        holding.increment()
                        await release.wait()
                    }
                }
            }
            try await eventually("every pooled connection to be held") { holding.value == poolSize }
            let deadline = try #require(try await leaseDeadline(on: probe))
            try await expectRenewal(past: deadline, on: probe)

            release.open()
            for holder in holders { try await holder.value }
            worker.stop()
            await running.value
            await probe.close()
        }
    }

    /// A heartbeat connection that breaks is replaced: the leases it renewed go on being renewed.
    @Test func aBrokenHeartbeatConnectionIsReplacedBeforeTheLeaseLapses() async throws {
        try await TestDatabase.with { database in
            let (worker, running, probe) = try await startBlockedJob(database)
            let heartbeats = """
                SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'storesync-tests-heartbeat'
                """
            try await eventually("the heartbeat's connection to appear") {
                try await probe.query(heartbeats, [database.name]).count == 1
            }
            let first: Int = try await probe.query(heartbeats, [database.name])[0].decode(0)
            let terminated: Bool = try await probe.query("SELECT pg_terminate_backend($1)", [first])[0].decode(0)
            #expect(terminated)
            let deadline = try #require(try await leaseDeadline(on: probe))
            try await expectRenewal(past: deadline, on: probe)
            let replacements = try await probe.query(heartbeats, [database.name]).map { try $0.decode(0, as: Int.self) }
            #expect(replacements.count == 1 && replacements != [first], "\(replacements)")

            worker.stop()
            await running.value
            await probe.close()
        }
    }

    /// A worker running one job that blocks until the worker stops, with leases short enough for a test to see
    /// them renewed (and long enough, a heartbeat every 1.3 s, for a loaded machine not to miss one), and a
    /// probe connection outside the worker's pool.
    private func startBlockedJob(_ database: TestDatabase) async throws
        -> (Worker, Task<Void, Never>, PostgresConnection)
    {
        try await JobQueue(pool: database.pool).enqueue(NewJob(kind: "test.block"))
        let (worker, running) = startWorker(database) {
            $0.leaseDuration = .seconds(4)
            $0.gracePeriod = .milliseconds(100)
        }
        let probe = try await PostgresConnection.connect(url: database.url, applicationName: "storesync-tests-probe")
        return (worker, running, probe)
    }

    /// The only job's lease deadline, read on `probe` (outside the pool), or nil while it is not leased.
    private func leaseDeadline(on probe: PostgresConnection) async throws -> Date? {
        try await probe.query("SELECT lease_deadline FROM jobs WHERE lease_owner IS NOT NULL").first?
            .decode(0, as: Date.self)
    }

    /// Waits until the database clock has passed `deadline` while the job's first lease is still live, which
    /// only renewals can do; fails at once if the lease lapsed and the job was leased again.
    private func expectRenewal(past deadline: Date, on probe: PostgresConnection) async throws {
        try await eventually("the lease to be renewed past \(deadline)", timeout: .seconds(20)) {
            let row = try await probe.query("SELECT now() > $1, lease_deadline > now(), attempt FROM jobs", [deadline])[0]
            let attempt = try row.decode(2, as: Int.self)
            try #require(attempt == 1, "the lease lapsed and the job was leased again (attempt \(attempt))")
            return try row.decode(0, as: Bool.self) && row.decode(1, as: Bool.self)
        }
    }

    @Test func unknownKindIsDeadLetteredWithAClearReason() async throws {
        try await TestDatabase.with { database in
            let (worker, running) = startWorker(database)
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: "no.such.kind"))
            try await eventually("the job to be dead-lettered") {
                try await count(database, "SELECT count(*) FROM dead_letters WHERE reason = 'no handler for kind no.such.kind'") == 1
            }
            worker.stop()
            await running.value
        }
    }

    @Test func retryableFailureHonoursRetryAfter() async throws {
        try await TestDatabase.with { database in
            let (worker, running) = startWorker(database)
            try await JobQueue(pool: database.pool).enqueue(NewJob(
                kind: TestHandlers.fail, payload: "{\"message\": \"HTTP 429\", \"retry_after_ms\": 120000}"))
            try await eventually("the failure to be recorded") {
                try await count(database, "SELECT count(*) FROM jobs WHERE attempt = 1 AND lease_owner IS NULL") == 1
            }
            worker.stop()
            await running.value
            let row = try await database.pool.query(
                "SELECT extract(epoch FROM run_at - now())::float8, last_error FROM jobs")[0]
            let wait = try row.decode(0, as: Double.self)
            #expect(wait > 100 && wait <= 120)
            #expect(try row.decode(1, as: String.self) == "HTTP 429")
        }
    }

    @Test(arguments: [
        ("{\"message\": \"bad signature\", \"permanent\": true}", 25, "bad signature"),
        ("{\"message\": \"HTTP 500\"}", 1, "gave up after 1 attempts; last error: HTTP 500"),
    ])
    func failuresThatCannotSucceedAreDeadLettered(payload: String, maxAttempts: Int, reason: String) async throws {
        try await TestDatabase.with { database in
            let (worker, running) = startWorker(database)
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: TestHandlers.fail, payload: payload,
                                                                   maxAttempts: maxAttempts))
            try await eventually("the job to be dead-lettered") {
                try await count(database, "SELECT count(*) FROM dead_letters") == 1
            }
            worker.stop()
            await running.value
            let entry = try #require(try await DeadLetters(pool: database.pool).list().first)
            #expect(entry.reason == reason)
            #expect(try await count(database, "SELECT count(*) FROM jobs") == 0)
        }
    }
}
