import HTTP
import Logging
import Metrics
import Migrations
import Operations
import Postgres
import Queue
import Sync
import Synchronization
import Systemd
import Worker

struct WorkCommand: Command {
    static let name = "work"
    static let summary = "run a worker process: lease jobs, run them, record outcomes (scale by starting more)"
    static let usage = """
        usage: storesync work [--concurrency N] [--poll-interval D] [--lease-duration D] [--grace-period D]
                              [--metrics-listen HOST:PORT|off]

        Leases due jobs from PostgreSQL and runs them until SIGTERM or SIGINT, then stops leasing, lets
        in-flight jobs finish within the grace period and releases the rest. Started while the database is
        down, it waits for it (a log line per attempt, /readyz 503 meanwhile); exits 2 when the database
        schema does not match this build (run `storesync migrate`) or the server refuses its login.

          --concurrency N      jobs running at once in this process      env STORESYNC_CONCURRENCY   default 32
          --poll-interval D    idle re-check when no NOTIFY arrives      env STORESYNC_POLL_INTERVAL default 1s
          --lease-duration D   lease length; heartbeats renew it         env STORESYNC_LEASE_DURATION default 60s
          --grace-period D     time to finish in-flight jobs on stop     env STORESYNC_GRACE_PERIOD  default 30s
          --metrics-listen     /metrics, /healthz, /readyz               env STORESYNC_METRICS_LISTEN
                                                                         default 127.0.0.1:9464
          --store-rate-share F share of each store's published API rate  env STORESYNC_STORE_RATE_SHARE
                               limits this process may use (with N       default 1
                               worker processes, use 1/N)
          --resync-rate-share F  share of those limits the daily resync  env STORESYNC_RESYNC_RATE_SHARE
                               is spread to use                           default 0.5
          --resync-horizon D   re-check expired/revoked purchases this   env STORESYNC_RESYNC_HORIZON
                               long after they ended                      default 60d

        Durations: 500ms, 30s, 5m, 2h. Database connections per process: STORESYNC_DB_POOL_SIZE (default 6)
        plus one for leasing, one for heartbeats and one for LISTEN.
        """

    static func configuration(_ arguments: inout Arguments, environment: Environment) throws -> WorkerConfiguration {
        var configuration = WorkerConfiguration()
        let concurrency = try arguments.option("--concurrency") ?? environment.string("STORESYNC_CONCURRENCY")
        if let concurrency { configuration.concurrency = try Parse.int(concurrency, "concurrency", range: 1...10_000) }
        let poll = try arguments.option("--poll-interval") ?? environment.string("STORESYNC_POLL_INTERVAL")
        if let poll {
            configuration.pollInterval = try Parse.duration(poll, "poll interval", range: .milliseconds(10)...(.seconds(3600)))
        }
        let lease = try arguments.option("--lease-duration") ?? environment.string("STORESYNC_LEASE_DURATION")
        if let lease {
            configuration.leaseDuration = try Parse.duration(lease, "lease duration", range: .milliseconds(100)...(.seconds(86_400)))
        }
        let grace = try arguments.option("--grace-period") ?? environment.string("STORESYNC_GRACE_PERIOD")
        if let grace {
            configuration.gracePeriod = try Parse.duration(grace, "grace period", range: .zero...(.seconds(3600)))
        }
        return configuration
    }

    /// The resync settings from the environment (`sync` and `work` share them).
    static func resyncSettings(_ environment: Environment) throws -> ResyncSettings {
        var settings = ResyncSettings()
        if let share = environment.string("STORESYNC_RESYNC_RATE_SHARE") {
            settings.rateShare = try Parse.fraction(share, "STORESYNC_RESYNC_RATE_SHARE")
        }
        if let horizon = environment.string("STORESYNC_RESYNC_HORIZON") {
            settings.horizon = try Parse.duration(horizon, "STORESYNC_RESYNC_HORIZON", range: .seconds(0)...(.seconds(400 * 86_400)))
        }
        return settings
    }

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        var configuration = try configuration(&arguments, environment: environment)
        let metricsListen = try arguments.option("--metrics-listen") ?? environment.string("STORESYNC_METRICS_LISTEN")
            ?? "127.0.0.1:9464"
        let listen = metricsListen == "off" ? nil : try Listen(metricsListen, "--metrics-listen")
        var sync = SyncHandlers.Configuration()
        let storeRateShareFlag = try arguments.option("--store-rate-share")
        if let share = storeRateShareFlag ?? environment.string("STORESYNC_STORE_RATE_SHARE") {
            sync.rateLimitShare = try Parse.fraction(share, storeRateShareFlag == nil ? "STORESYNC_STORE_RATE_SHARE"
                                                                                      : "--store-rate-share")
        }
        // The environment is read (and a bad value refused) even when a flag overrides one of its settings.
        sync.resync = try resyncSettings(environment)
        if let share = try arguments.option("--resync-rate-share") {
            sync.resync.rateShare = try Parse.fraction(share, "--resync-rate-share")
        }
        if let horizon = try arguments.option("--resync-horizon") {
            sync.resync.horizon = try Parse.duration(horizon, "--resync-horizon", range: .seconds(0)...(.seconds(400 * 86_400)))
        }
        try arguments.finish()
        let postgres = try environment.postgres(defaultSize: 6, applicationName: "storesync-work")
        let pool = PostgresPool(postgres)

        var handlers = JobHandlers()
        handlers.register(PurgeHandler())
        let metrics = MetricsRegistry()
        let http = try HTTPClient()
        SyncHandlers.register(into: &handlers, http: http, configuration: sync, metrics: metrics)
        configuration.schedules = [PurgeHandler.schedule] + SyncHandlers.schedules

        let observer = WorkerMetrics(registry: metrics)
        let worker = Worker(configuration: configuration, handlers: handlers, pool: pool, listenURL: postgres.url,
                            observer: observer)
        var server: HTTPServer?
        if let listen {
            var router = HTTPRouter()
            OperationsEndpoints.install(into: &router, pool: pool, metrics: metrics)
            server = try HTTPServer(configuration: listen.serverConfiguration, router: router)
            Logger(component: "work").info("metrics listening", ["host": .string(listen.host),
                                                                 "port": .int(Int(server?.port ?? 0))])
        }
        // The operations listener is up before the database is: /readyz says 503 while the worker waits. A
        // stop meanwhile cancels only the wait; a running worker is stopped gracefully, never cancelled.
        // The signals are caught before the wait begins: a stop the moment the wait is logged must not meet the
        // default action and kill the process.
        let stopping = Mutex<(requested: Bool, wait: Task<Void, any Error>?)>((false, nil))
        let signals = TerminationSignals {
            ServiceNotifier.stopping()
            worker.stop()
            stopping.withLock { state in
                state.requested = true
                state.wait?.cancel()
            }
        }
        let waiting = Task { try await DatabaseStartup.waitUntilReady(pool, logger: Logger(component: "work")) }
        stopping.withLock { state in
            state.wait = waiting
            if state.requested { waiting.cancel() }
        }
        let started = await waiting.result
        if case .success = started {
            let sampler = Task { await observer.sampleQueue(pool: pool, every: .seconds(15)) }
            ServiceNotifier.ready()
            await worker.run()
            sampler.cancel()
        }
        signals.cancel()
        await server?.stop(grace: .seconds(2))
        await http.shutdown()
        await pool.close()
        if case .failure(let error) = started, !(error is CancellationError) { throw error }
        return 0
    }
}
