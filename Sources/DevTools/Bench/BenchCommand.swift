import CLI
import Foundation
import Migrations
import Postgres
import Queue
import Sync
import Synchronization
import Worker

struct BenchCommand: Command {
    static let name = "bench"
    static let summary = "measure throughput (queue, verification, ingest, pipeline, resync, API) and the console's pages; prints one JSON line"
    static let usage = """
        usage: storesync-dev bench queue --jobs N [--slots S] [--flushers F] [--repeat R] [--scheduled D]
               storesync-dev bench verify [--seconds S]
               storesync-dev bench ingest [--requests N] [--connections C]
               storesync-dev bench pipeline --store apple|google --notifications N --store-latency-ms L [--concurrency C]
                                        [--subscriptions S] [--rate R]
               storesync-dev bench resync --purchases N [--store apple|google|both] [--concurrency C]
               storesync-dev bench api [--customers N] [--seconds S] [--connections C] [--registrations-per-sec R] [--app]
               storesync-dev bench console [--jobs N] [--dead-letters D] [--purchases P] [--receipts E] [--requests R]

        queue   Enqueues N no-op jobs first, then drains them through the real lease / run / group-commit
                path with S slots (default 256) and F concurrent commit flushers (default 2), R times
                (default 3). Prints the median jobs_per_sec = N / (last completion − first lease), and each
                run's lease-to-commit latency p50/p99. With --scheduled, D more jobs wait meanwhile, due
                only tomorrow at the resyncs' low priority, as a day of spread resyncs does (default 0); the
                drain must pass them over, and they are deleted after each run. Each run also times the
                metrics sampler's read of the queue (`queue_status.read_ms`) beside the full scan by kind and
                state it replaced (`full_scan_by_kind_ms`). Needs an empty queue: use a
                throwaway database (../shared/bench/queue-peers.sh makes one).
        verify  Verifications per second on one core, each for S seconds (default 3): Apple notifications
                (signed like the App Store's, nested JWS included) with a warm chain cache and with the cache
                disabled, and Pub/Sub push tokens (RS256) with Google's keys cached.
        ingest  Drives the webhook endpoint (in this process, on a free loopback port) with N requests over C
                concurrent connections (defaults 20000 and 64) of StoreSync's own libcurl client; prints
                accepted requests per second and p50/p99 latency to a committed job. Needs a migrated,
                throwaway database (the jobs stay). Compare with ../shared/bench/verify-limits.sh (OpenSSL's single-core rates, the
                physical limit) run right after it.
        pipeline  One store's path end to end: the local App Store (or, with --store google, Play Store)
                simulator, in a process of its own (`bench pipeline-store`, which this starts; not for use by
                hand), its API answers delayed L ms and the store's rate limits lifted, posts N signed
                notifications (Play: authenticated Pub/Sub pushes) — S subscriptions (default N/4) bought, then
                renewed; 64 scenario calls at a time, or R per second with --rate — to the webhook endpoint on a
                free loopback port of this process, and a worker here with C slots (default 256; its store client
                may hold C requests at once) and the production handlers re-fetches and mirrors them. Seeding
                (account, connection, mapped product, customers with tokens) is not measured. Prints
                notifications_per_sec (first accepted webhook to last committed outcome), p50/p99 latency from
                receipt to committed mirror, store calls per notification (in all, per endpoint, per quota
                bucket), CPU per notification of this process (StoreSync's), of the simulator's and of the
                machine's PostgreSQL, peak RSS, dead letters, invoices, and the follow-up jobs the notifications
                queued (Play acknowledgements, waited for and in the CPU figures, not in the rate); exits 1 unless
                all N were mirrored with no dead letter. Needs a migrated, throwaway database (each run adds an
                account and its mirror).
        resync  Seeds N live purchases in the local store simulators and the database (a throwaway, migrated
                one), runs the daily resync's fan-out with the rate budget lifted and drains it with C slots
                (default 128): purchases re-fetched and applied per second for each store, and the projected
                wall time for 1,000,000 purchases at the default budget (half of the store's published limit).
        api     The Mobile Stores API in this process (its pool logs in with STORESYNC_API_DATABASE_URL, else
                DATABASE_URL), driven by wrk over C keep-alive connections (default 32) for S seconds each
                (default 10): a static route of the same server (the HTTP ceiling), GET …/entitlements across
                N customers (default 1000) with web subscriptions, and those reads again while R purchases a
                second (default 20) are bought on the App Store simulator and registered. Prints requests/s,
                p50/p99, this process's CPU per read (PostgreSQL's not included) and the registrations'
                latency. --app adds the app's GET …/client/entitlements with a different customer's account
                token pair per request, and its ratio to the backend reads of the same run (goal ≥ 0.8).
                Exits 1 if any read or registration failed. Needs a migrated, throwaway database.
        console The on-call console (in this process, as `storesync console` serves it) over a seeded database: N
                scheduled resyncs spread over the next day (default 1,000,000), D dead letters (default 10,000, one a
                genuinely signed App Store notification), P mirrored purchases with charges and timelines (default
                10,000) and E notification receipts over the last day (default 1,000,000). Each page — queue
                health, the dead letters list (plain, filtered, its last page), a dead letter (the notification is
                verified again), purchase search and a purchase's story — is fetched R times in a row (default 30)
                after two unmeasured fetches; prints p50/p99 per page and whether all are within 100 ms. Needs a
                migrated, throwaway database with an empty queue.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        switch arguments.positional() {
        case "queue"?: return try await queue(&arguments, environment: environment)
        case "verify"?: return try await VerifyBenchmark.run(&arguments)
        case "ingest"?: return try await IngestBenchmark.run(&arguments, environment: environment)
        case "pipeline"?: return try await PipelineBenchmark.run(&arguments, environment: environment)
        case "pipeline-store"?: return try await PipelineStoreProcess.serve(&arguments)
        case "resync"?: return try await ResyncBenchmark.run(&arguments, environment: environment)
        case "api"?: return try await APIBenchmark.run(&arguments, environment: environment)
        case "console"?: return try await ConsoleBenchmark.run(&arguments, environment: environment)
        case let other?:
            throw UsageError("unknown benchmark \(other.debugDescription); available: queue, verify, ingest, pipeline, resync, api, console")
        case nil: throw UsageError("say what to benchmark: queue, verify, ingest, pipeline, resync, api or console")
        }
    }

    private static func queue(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        guard let jobsText = try arguments.option("--jobs") else { throw UsageError("--jobs N is required") }
        let jobs = try Parse.int(jobsText, "--jobs", range: 1...10_000_000)
        let slots = try Parse.int(try arguments.option("--slots") ?? "256", "--slots", range: 1...10_000)
        let flushers = try Parse.int(try arguments.option("--flushers") ?? "2", "--flushers", range: 1...16)
        let repeats = try Parse.int(try arguments.option("--repeat") ?? "3", "--repeat", range: 1...20)
        let scheduled = try Parse.int(try arguments.option("--scheduled") ?? "0", "--scheduled", range: 0...10_000_000)
        try arguments.finish()
        let runs = try await environment.withPool(size: flushers + 2) { pool in
            var runs: [Output.Value] = []
            for _ in 0..<repeats {
                runs.append(try await drainQueue(pool: pool, jobs: jobs, scheduled: scheduled, slots: slots,
                                                 flushers: flushers, listenURL: try environment.databaseURL()))
            }
            return runs
        }
        let rates = runs.compactMap { run -> Double? in
            guard case .object(let fields) = run, case .double(let rate)? = fields.first(where: { $0.0 == "jobs_per_sec" })?.1
            else { return nil }
            return rate
        }.sorted()
        Output.print(Output.Value.object([
            ("benchmark", .string("queue")),
            ("jobs_per_sec", .double(rates[rates.count / 2])),
            ("min", .double(rates.first ?? 0)), ("max", .double(rates.last ?? 0)),
            ("jobs", .int(jobs)), ("scheduled", .int(scheduled)), ("slots", .int(slots)),
            ("completion_flushers", .int(flushers)),
            ("runs", .array(runs)),
        ]).text)
        return 0
    }

    static let noopKind = NoopHandler.kind

    /// What the metrics sampler's read of the queue costs with the seeded jobs in it, beside the full scan by kind
    /// and state it replaced (median of 5 each, in the same run).
    private static func timeQueueStatus(pool: PostgresPool) async throws -> Output.Value {
        func median(_ body: () async throws -> Void) async throws -> Double {
            var times: [Double] = []
            for _ in 0..<5 {
                let started = ContinuousClock.now
                try await body()
                times.append((ContinuousClock.now - started).seconds * 1000)
            }
            return (times.sorted()[2] * 100).rounded() / 100
        }
        var estimated = false
        let read = try await median { estimated = try await QueueStatus.read(pool: pool).scheduledEstimated }
        let scan = try await median {
            _ = try await pool.query("""
                SELECT kind, CASE WHEN lease_deadline > now() THEN 'leased' WHEN run_at <= now() THEN 'available'
                                  ELSE 'scheduled' END, count(*)
                FROM jobs GROUP BY 1, 2
                """)
        }
        return .object([("read_ms", .double(read)), ("full_scan_by_kind_ms", .double(scan)),
                        ("scheduled_estimated", .bool(estimated))])
    }

    private static func drainQueue(pool: PostgresPool, jobs: Int, scheduled: Int, slots: Int, flushers: Int,
                                   listenURL: String) async throws -> Output.Value
    {
        try await pool.withConnection { try await Migrator().requireCurrent($0) }
        let pending = try await pool.query("SELECT count(*) FROM jobs")[0].decode(0, as: Int.self)
        guard pending == 0 else {
            throw UsageError("bench queue needs an empty queue, found \(pending) jobs: use a throwaway database")
        }
        try await pool.query("INSERT INTO jobs (kind) SELECT $1 FROM generate_series(1, $2)", [noopKind, jobs])
        try await pool.query("""
            INSERT INTO jobs (kind, priority, run_at)
            SELECT $1, $2, now() + interval '1 day' + g * interval '10 ms' FROM generate_series(1, $3) g
            """, [noopKind, Int(ResyncPlanner.priority), scheduled])
        try await pool.query("VACUUM ANALYZE jobs")
        _ = try? await pool.query("CHECKPOINT")
        let sampling = try await timeQueueStatus(pool: pool)
        let synchronousCommit = try await pool.query("SHOW synchronous_commit")[0].decode(0, as: String.self)

        var configuration = WorkerConfiguration()
        configuration.concurrency = slots
        configuration.completionFlushers = flushers
        var handlers = JobHandlers()
        handlers.register(NoopHandler())
        let recorder = DrainRecorder(expected: jobs)
        let worker = Worker(configuration: configuration, handlers: handlers, pool: pool, listenURL: listenURL,
                            observer: recorder)
        recorder.onDone = { worker.stop() }
        let started = ContinuousClock.now
        await worker.run()
        let summary = recorder.summary()
        let left = try await pool.query("SELECT count(*) FROM jobs WHERE run_at <= now()")[0].decode(0, as: Int.self)
        try await pool.query("DELETE FROM jobs")
        return .object([
            ("jobs_per_sec", .double((Double(summary.completed) / summary.wall.seconds).rounded())),
            ("completed", .int(summary.completed)), ("left_in_queue", .int(left)),
            ("wall_s", .double(summary.wall.seconds)),
            ("wall_incl_startup_s", .double((ContinuousClock.now - started).seconds)),
            ("latency_ms", .object([("p50", .double(summary.p50)), ("p99", .double(summary.p99))])),
            ("synchronous_commit", .string(synchronousCommit)),
            ("queue_status", sampling),
            ("host_cpus", .int(ProcessInfo.processInfo.activeProcessorCount)),
        ])
    }
}

private struct NoopHandler: JobHandler {
    struct Args: JobArgs {
        static let kind: JobKind = "bench.noop"
    }

    func run(_ args: Args, job: LeasedJob, context: JobContext) async throws -> JobResult { .done() }
}

/// Collects lease-to-commit latencies and stops the worker after the last expected job.
private final class DrainRecorder: WorkerObserver, @unchecked Sendable {
    private struct State {
        var firstLease: ContinuousClock.Instant?
        var lastCommit: ContinuousClock.Instant?
        var latencies: [Double] = []
    }

    private let state = Mutex(State())
    private let expected: Int
    /// Set once before the worker starts.
    var onDone: (@Sendable () -> Void)?

    init(expected: Int) {
        self.expected = expected
        state.withLock { $0.latencies.reserveCapacity(expected) }
    }

    func jobFinished(kind: String, report: FinishReport?, sinceLease: Duration) {
        let now = ContinuousClock.now
        let done = state.withLock { state -> Bool in
            let leased = now - sinceLease
            if state.firstLease.map({ leased < $0 }) ?? true { state.firstLease = leased }
            state.lastCommit = now
            state.latencies.append(sinceLease.seconds * 1000)
            return state.latencies.count == expected
        }
        if done { onDone?() }
    }

    func summary() -> (completed: Int, wall: Duration, p50: Double, p99: Double) {
        state.withLock { state in
            let sorted = state.latencies.sorted()
            func percentile(_ p: Double) -> Double {
                sorted.isEmpty ? 0 : (sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 100).rounded() / 100
            }
            let wall = (state.lastCommit ?? .now) - (state.firstLease ?? .now)
            return (sorted.count, wall, percentile(0.5), percentile(0.99))
        }
    }
}
