import Accounts
import CLI
import Crypto
import Foundation
import GooglePlay
import HTTP
import Ingest
import Logging
import Metrics
import Migrations
import Postgres
import StoreModel
import Sync
import Worker

/// `storesync-dev bench pipeline`: one store's path end to end — its local simulator, in a process of its own
/// (`PipelineStoreProcess`), posts notifications to the real ingest endpoint in this one, a worker with the
/// production handlers re-fetches every lineage from the simulator and mirrors it — measured from the first
/// accepted webhook to the last committed mirror. This process's CPU is StoreSync's alone, the other's the
/// store's and the load's. Seeding (account, connection, product mapping, customers with tokens) comes first and
/// is not measured.
/// What differs between the stores sits behind `PipelineBenchStore`; measuring and reporting are shared.
enum PipelineBenchmark {
    struct Settings {
        var store: any PipelineBenchStore.Type
        var notifications: Int
        var storeLatency: Duration
        var concurrency: Int
        var subscriptions: Int
        /// Notifications offered per second; nil sends as fast as ingest takes them. Latency means little at
        /// saturation (it is mostly time in the queue), so a paced run shows it below.
        var rate: Int?
        /// Scenario calls in flight at once: enough to keep ingest busy.
        var senders = 64
    }

    static let stores: [any PipelineBenchStore.Type] = [ApplePipelineBenchStore.self, GooglePipelineBenchStore.self]
    static let productID = "pro.monthly"
    /// Every App Store renewal moves the simulated clock a 30-day period forward and the simulator's PKI is
    /// valid for 20 years, so one subscription carries at most this many notifications (the same for both
    /// stores, so their runs compare).
    static let maxNotificationsPerSubscription = 200
    /// The stores' published rate limits, lifted so far (the CLI's cap on a share) that they never bind: the
    /// benchmark measures StoreSync, not the stores' budgets.
    static let rateLimitShare = 1000.0

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let settings = try parse(&arguments)
        let url = try environment.databaseURL()
        let ingestPool = PostgresPool(PostgresConfiguration(url: url, poolSize: 8, acquireTimeout: .seconds(2),
                                                            applicationName: "storesync-bench-ingest"))
        let workerDatabase = try environment.postgres(defaultSize: 6, applicationName: "storesync-bench-work")
        let workerPool = PostgresPool(workerDatabase)
        let report: Output.Value
        let passed: Bool
        do {
            try await workerPool.withConnection { try await Migrator().requireCurrent($0) }
            (report, passed) = try await measure(settings, ingestPool: ingestPool, workerPool: workerPool, listenURL: url)
        } catch {
            await ingestPool.close()
            await workerPool.close()
            throw error
        }
        await ingestPool.close()
        await workerPool.close()
        Output.print(report.text)
        return passed ? 0 : 1
    }

    private static func parse(_ arguments: inout Arguments) throws -> Settings {
        let names = stores.map { $0.name }.joined(separator: "|")
        guard let name = try arguments.option("--store") else { throw UsageError("--store \(names) is required") }
        guard let store = stores.first(where: { $0.name == name }) else {
            throw UsageError("--store must be \(names), not \(name.prefix(20).debugDescription)")
        }
        guard let count = try arguments.option("--notifications") else { throw UsageError("--notifications N is required") }
        let notifications = try Parse.int(count, "--notifications", range: 1...1_000_000)
        guard let latency = try arguments.option("--store-latency-ms") else {
            throw UsageError("--store-latency-ms L is required (0 for none)")
        }
        let storeLatency = try Parse.int(latency, "--store-latency-ms", range: 0...60_000)
        let concurrency = try Parse.int(try arguments.option("--concurrency") ?? "256", "--concurrency", range: 1...10_000)
        let fewest = (notifications + maxNotificationsPerSubscription - 1) / maxNotificationsPerSubscription
        let subscriptions = try Parse.int(try arguments.option("--subscriptions") ?? String(max(fewest, notifications / 4)),
                                          "--subscriptions (at least N/\(maxNotificationsPerSubscription), at most N)",
                                          range: fewest...notifications)
        let rate = try arguments.option("--rate").map { try Parse.int($0, "--rate", range: 1...1_000_000) }
        try arguments.finish()
        return Settings(store: store, notifications: notifications, storeLatency: .milliseconds(storeLatency),
                        concurrency: concurrency, subscriptions: subscriptions, rate: rate)
    }

    /// Starts ingest, the simulator and the worker, seeds, sends, waits for every accepted notification to
    /// reach an outcome (and for the jobs they queued, such as Google acknowledgements), stops everything,
    /// then reads what landed. Returns the report and whether the run was clean (everything mirrored, nothing
    /// dead-lettered or left behind).
    private static func measure(_ settings: Settings, ingestPool: PostgresPool, workerPool: PostgresPool,
                                listenURL: String) async throws -> (Output.Value, Bool) {
        let host = "bench-\(UUID().uuidString.lowercased().prefix(13)).pipeline.invalid"
        let recorder = PipelineRecorder(kind: settings.store.notificationKind)
        let stallTimeout = max(Duration.seconds(120), settings.storeLatency * 4)
        // The worker starts first so its LISTEN connection is up before the first notification arrives.
        let run = try await withIngest(pool: ingestPool) { ingestURL in
            try await withStores(settings.store, webhookURL: ingestURL + settings.store.webhookPath, host: host) { stores in
                try await withWorker(settings, pool: workerPool, listenURL: listenURL, recorder: recorder) {
                    let seeded = try await seed(pool: workerPool, store: settings.store, stores: stores.settings, host: host,
                                                customers: settings.subscriptions)
                    let go = PipelineStoreProcess.Go(
                        latencyMilliseconds: Int(settings.storeLatency.milliseconds), notifications: settings.notifications,
                        subscriptions: settings.subscriptions, senders: settings.senders, rate: settings.rate, tokens: seeded.tokens)
                    let (cpu, storesCPU, postgresCPU) = (CPUTime.now().total, stores.cpu(), CPUTime.postgres())
                    let sent = try await stores.send(go)
                    let settled = await recorder.waitForOutcomes(sent.accepted, stallTimeout: stallTimeout)
                    let outcomes = recorder.snapshot
                    let drained = settled
                        ? try await waitForFollowUps(seeded, pool: workerPool, recorder: recorder, stallTimeout: stallTimeout)
                        : false
                    // CPU until the follow-ups are done too: they are part of what the notifications cost.
                    let (cpuTime, storesCPUTime) = (CPUTime.now().total - cpu, stores.cpu() - storesCPU)
                    let postgresCPUTime = CPUTime.postgres().flatMap { end in postgresCPU.map { end - $0 } }
                    return MeasuredRun(seeded: seeded, sent: sent, settled: settled && drained, outcomes: outcomes,
                                       followUps: recorder.snapshot.otherCompleted, cpu: cpuTime, storesCPU: storesCPUTime,
                                       postgresCPU: postgresCPUTime,
                                       storeCalls: try await stores.requestCounts())
                }
            }
        }
        return try await report(run, settings: settings, pool: workerPool)
    }

    // MARK: Parts, each stopped whatever happens inside

    private static func withIngest<T>(pool: PostgresPool, _ body: (String) async throws -> T) async throws -> T {
        var router = HTTPRouter()
        let keysHTTP = try HTTPClient()
        let ingest = IngestService(pool: pool, metrics: MetricsRegistry(), keyCaches: GoogleKeyCaches(http: keysHTTP))
        ingest.install(into: &router)
        let commits = Task { await ingest.run() }
        let server: HTTPServer
        do {
            var configuration = HTTPServerConfiguration()
            configuration.maxConnectionsPerClient = nil  // every benchmark connection comes from loopback
            server = try HTTPServer(configuration: configuration, router: router)
        } catch {
            await ingest.close()
            await commits.value
            await keysHTTP.shutdown()
            throw error
        }
        func stop() async {
            await server.stop(grace: .seconds(5))
            await ingest.close()
            await commits.value
            await keysHTTP.shutdown()
        }
        do {
            let value = try await body("http://127.0.0.1:\(server.port)")
            await stop()
            return value
        } catch {
            await stop()
            throw error
        }
    }

    private static func withStores<T>(_ type: any PipelineBenchStore.Type, webhookURL: String, host: String,
                                      _ body: (PipelineStoreProcess) async throws -> T) async throws -> T {
        let stores = try await PipelineStoreProcess.start(type, webhookURL: webhookURL, host: host)
        do {
            let value = try await body(stores)
            await stores.stop()
            return value
        } catch {
            await stores.stop()
            throw error
        }
    }

    private static func withWorker<T>(_ settings: Settings, pool: PostgresPool, listenURL: String,
                                      recorder: PipelineRecorder, _ body: () async throws -> T) async throws -> T {
        // Each job calls the store one request at a time, so C requests per host never wait behind the
        // client's default cap of 32, which at L ms per answer alone would hold the run to 16 000 / L
        // notifications per second.
        var client = HTTPClientConfiguration()
        client.maxRequestsPerHost = max(client.maxRequestsPerHost, settings.concurrency)
        let http = try HTTPClient(configuration: client)
        var handlers = JobHandlers()
        var sync = SyncHandlers.Configuration()
        sync.rateLimitShare = rateLimitShare
        SyncHandlers.register(into: &handlers, http: http, configuration: sync)
        var configuration = WorkerConfiguration()
        configuration.concurrency = settings.concurrency
        let worker = Worker(configuration: configuration, handlers: handlers, pool: pool, listenURL: listenURL,
                            observer: recorder)
        let running = Task { await worker.run() }
        func stop() async {
            worker.stop()
            await running.value
            await http.shutdown()
        }
        do {
            let value = try await body()
            await stop()
            return value
        } catch {
            await stop()
            throw error
        }
    }

    // MARK: Seeding (not measured)

    struct Seeded {
        let accountID: Int64
        let connectionID: Int64
        /// One issued account token per subscription, so every purchase links to a customer.
        let tokens: [UUID]
        /// Where the run's receipts are filed (`PipelineBenchStore.receiptScope`).
        let receiptScope: String

        /// The parameters of `runsJobs`.
        var jobKeys: [any PostgresEncodable] { [String(accountID), String(connectionID)] }
    }

    /// `count` customers of the account, each with an issued account token, in transactions of 500; the tokens.
    static func issueTokens(accountID: Int64, count: Int, pool: PostgresPool) async throws -> [UUID] {
        var tokens: [UUID] = []
        tokens.reserveCapacity(count)
        while tokens.count < count {
            let batch = min(500, count - tokens.count)
            tokens += try await pool.transaction { db in
                try (0..<batch).map { _ in
                    let customerID = try Catalog.addCustomer(accountID: accountID, on: db)
                    let issued = try AccountTokens.issue(customerID: customerID, sha256: { Digest.sha256($0) }, on: db)
                    guard let token = UUID(uuidString: issued.token) else {
                        throw SetupError(.mismatch, "account token \(issued.token.prefix(40)) is not a UUID")
                    }
                    return token
                }
            }
        }
        return tokens
    }

    private static func seed(pool: PostgresPool, store: any PipelineBenchStore.Type, stores: PipelineStoreSettings,
                             host: String, customers: Int) async throws -> Seeded {
        let (accountID, connectionID) = try await pool.transaction { db -> (Int64, Int64) in
            let accountID: Int64 = try db.query("INSERT INTO accounts (host) VALUES ($1) RETURNING id", [host])[0].decode(0)
            let connection = try Catalog.addConnection(store.connection(stores, accountID: accountID), on: db)
            let price = try Catalog.addPlanPrice(accountID: accountID, planCode: "pro", priceCode: productID,
                                                 amount: Money(minorUnits: 999, currency: "USD"), entitlements: ["pro"], on: db)
            try Catalog.mapProduct(connectionID: connection.id, productID: productID, basePlanID: store.basePlanID,
                                   planPriceID: price, on: db)
            return (accountID, connection.id)
        }
        let tokens = try await issueTokens(accountID: accountID, count: customers, pool: pool)
        return Seeded(accountID: accountID, connectionID: connectionID, tokens: tokens,
                      receiptScope: store.receiptScope(stores, accountID: accountID))
    }

    // MARK: Measured run

    struct MeasuredRun {
        let seeded: Seeded
        let sent: PipelineStoreProcess.Sent
        /// False when the worker stopped making progress before every accepted notification had an outcome.
        let settled: Bool
        let outcomes: PipelineRecorder.Snapshot
        /// Jobs of other kinds the notifications queued (Google's acknowledgements), completed, by kind.
        let followUps: [String: Int]
        /// StoreSync's (this process's), the stores' process's, and PostgreSQL's when it runs on this machine.
        let cpu: Duration
        let storesCPU: Duration
        let postgresCPU: Duration?
        let storeCalls: [String: Int]
    }

    /// Subscription `i` gets `plan[i]` notifications: its purchase, then renewals; the first ones get the
    /// most.
    static func plan(notifications: Int, subscriptions: Int) -> [Int] {
        (0..<subscriptions).map { notifications / subscriptions + ($0 < notifications % subscriptions ? 1 : 0) }
    }

    // MARK: Report

    private static func report(_ run: MeasuredRun, settings: Settings, pool: PostgresPool) async throws -> (Output.Value, Bool) {
        let messageIDs = "[" + run.sent.messageIDs.map(JSON.quoted).joined(separator: ",") + "]"
        let receipts = try await pool.query("""
            SELECT count(*), count(*) FILTER (WHERE outcome = 'mirrored'),
                   coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 0),
                   coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), 0), coalesce(max(ms), 0)
            FROM (SELECT outcome, extract(epoch FROM processed_at - received_at)::float8 * 1000 AS ms
                  FROM notification_receipts
                  WHERE store = $2 AND scope = $3 AND message_id IN (SELECT jsonb_array_elements_text($1::jsonb))) r
            """, [messageIDs, settings.store.name, run.seeded.receiptScope])[0]
        let deadLetters = try await pool.query("SELECT count(*) FROM dead_letters WHERE \(runsJobs)",
                                               run.seeded.jobKeys)[0].decode(0, as: Int.self)
        let left = try await countLeft(run.seeded, pool: pool)
        let invoices = try await pool.query("""
            SELECT count(*) FROM invoices i JOIN store_purchases p ON p.id = i.purchase_id WHERE p.connection_id = $1
            """, [run.seeded.connectionID])[0].decode(0, as: Int.self)
        let mirrored = try receipts.decode(1, as: Int.self)

        let accepted = run.sent.accepted
        // The last outcome on the wall clock, as the stores' process gave the first acceptance.
        let lastOutcome = run.outcomes.lastOutcome.map { Date.now.addingTimeInterval(-(ContinuousClock.now - $0).seconds) }
        let wall = lastOutcome.flatMap { last in run.sent.firstAccepted.map { Duration.seconds(last.timeIntervalSince($0)) } } ?? .zero
        let sending = Duration.seconds(run.sent.sendingSeconds)
        let storeCalls = run.storeCalls.values.reduce(0, +)
        func rate(_ count: Int, _ span: Duration) -> Double { span > .zero ? (Double(count) / span.seconds).rounded() : 0 }
        func round2(_ value: Double) -> Double { (value * 100).rounded() / 100 }
        func perNotification(_ count: Int) -> Output.Value { .double(accepted > 0 ? round2(Double(count) / Double(accepted)) : 0) }
        func milliseconds(_ cpu: Duration) -> Output.Value {
            .double(accepted > 0 ? (cpu.seconds * 1_000_000 / Double(accepted)).rounded() / 1000 : 0)
        }
        var buckets: [String: Int] = [:]
        for (endpoint, count) in run.storeCalls {
            if let bucket = settings.store.quotaBucket(endpoint) { buckets[bucket, default: 0] += count }
        }
        let peakRSS = peakResidentKiB().map { Output.Value.double(round2(Double($0) / 1024)) } ?? .null
        let passed = run.settled && run.sent.refused == 0 && mirrored == settings.notifications && deadLetters == 0 && left == 0
        let value = Output.Value.object([
            ("benchmark", .string("pipeline")), ("store", .string(settings.store.name)),
            ("notifications", .int(settings.notifications)), ("accepted", .int(accepted)),
            ("refused", .int(run.sent.refused)), ("mirrored", .int(mirrored)),
            ("notifications_per_sec", .double(rate(run.outcomes.finished, wall))), ("wall_s", .double(round2(wall.seconds))),
            ("latency_ms", .object([
                ("p50", .double(round2(try receipts.decode(2)))), ("p99", .double(round2(try receipts.decode(3)))),
                ("max", .double(round2(try receipts.decode(4)))),
            ])),
            ("ingest_accepted_per_sec", .double(rate(accepted, sending))),
            ("store_calls_per_notification", perNotification(storeCalls)),
            ("store_calls", .object(run.storeCalls.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
            ("store_calls_per_notification_by_endpoint",
             .object(run.storeCalls.sorted { $0.key < $1.key }.map { ($0.key, perNotification($0.value)) })),
            ("store_calls_per_notification_by_quota_bucket",
             .object(buckets.sorted { $0.key < $1.key }.map { ($0.key, perNotification($0.value)) })),
            ("follow_up_jobs", .object(run.followUps.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
            ("dead_letters", .int(deadLetters)), ("retries", .int(run.outcomes.retried)), ("left_in_queue", .int(left)),
            ("invoices", .int(invoices)), ("settled", .bool(run.settled)),
            ("first_error", run.sent.firstError.map { .string(String($0.prefix(300))) } ?? .null),
            ("peak_rss_mib", peakRSS), ("storesync_cpu_s", .double(round2(run.cpu.seconds))),
            ("storesync_cpu_ms_per_notification", milliseconds(run.cpu)), ("stores_cpu_s", .double(round2(run.storesCPU.seconds))),
            ("stores_cpu_ms_per_notification", milliseconds(run.storesCPU)),
            ("postgres_cpu_ms_per_notification", run.postgresCPU.map(milliseconds) ?? .null),
            ("store_latency_ms", .int(Int(settings.storeLatency.milliseconds))), ("concurrency", .int(settings.concurrency)),
            ("subscriptions", .int(settings.subscriptions)), ("senders", .int(settings.senders)),
            ("offered_rate", settings.rate.map { .int($0) } ?? .null),
            ("worker_db_pool", .int(pool.configuration.poolSize)),
            ("host_cpus", .int(ProcessInfo.processInfo.activeProcessorCount)),
        ])
        return (value, passed)
    }

    /// Which jobs belong to the run: notifications carry the account, follow-ups (Google's acknowledgements)
    /// the connection.
    private static let runsJobs = "(payload->>'account_id' = $1 OR payload->>'connection_id' = $2)"

    private static func countLeft(_ seeded: Seeded, pool: PostgresPool) async throws -> Int {
        try await pool.query("SELECT count(*) FROM jobs WHERE \(runsJobs)", seeded.jobKeys)[0].decode(0)
    }

    /// Once every notification has its outcome, waits (polling, as no event says how many follow-ups the
    /// mirrors queued) for the jobs they queued, so none is left to a later run's worker; false when the
    /// worker made no progress for `stallTimeout`.
    private static func waitForFollowUps(_ seeded: Seeded, pool: PostgresPool, recorder: PipelineRecorder,
                                         stallTimeout: Duration) async throws -> Bool {
        var lastProgress = ContinuousClock.now
        var completed = recorder.snapshot.otherCompleted.values.reduce(0, +)
        while try await countLeft(seeded, pool: pool) > 0 {
            let now = recorder.snapshot.otherCompleted.values.reduce(0, +)
            if now != completed { (completed, lastProgress) = (now, .now) }
            guard ContinuousClock.now - lastProgress < stallTimeout else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// The process's peak resident set (`VmHWM`), seeding included; nil off Linux.
    private static func peakResidentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return line.dropFirst("VmHWM:".count).split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
        }
        return nil
    }
}
