import API
import Accounts
import CLI
import Crypto
import Foundation
import HTTP
import Logging
import Metrics
import Migrations
import Postgres
import Simulator
import StoreModel
import Sync

/// `storesync-dev bench api`: the Mobile Stores API as `serve` runs it (in this process, on a free loopback
/// port, its own pool), driven by `wrk` over keep-alive connections. Three runs side by side: a static route
/// of the same server (the HTTP stack's ceiling on this machine), entitlement reads across many customers
/// (each one bearer check from the token cache, one round trip for the budget's charge, the customer and
/// the read), and the same reads while purchases are registered against the App Store simulator. With `--app`,
/// the app's own entitlement read too, between the two, with a different customer's account token pair on each
/// request (its authentication, the token's budget and the read), to compare with the backend's in one run.
enum APIBenchmark {
    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let customers = try Parse.int(try arguments.option("--customers") ?? "1000", "--customers", range: 1...1_000_000)
        let seconds = try Parse.int(try arguments.option("--seconds") ?? "10", "--seconds", range: 1...600)
        let connections = try Parse.int(try arguments.option("--connections") ?? "32", "--connections", range: 1...1024)
        let registrationRate = try Parse.int(try arguments.option("--registrations-per-sec") ?? "20",
                                             "--registrations-per-sec", range: 1...1000)
        let app = arguments.flag("--app")
        try arguments.finish()
        var setup = try environment.postgres(defaultSize: 2, applicationName: "storesync-bench")
        setup.poolSize = 2
        let setupPool = PostgresPool(setup)
        try await setupPool.withConnection { try await Migrator().requireCurrent($0) }
        let apiURL = try environment.databaseURL("STORESYNC_API_DATABASE_URL") ?? environment.databaseURL()
        let apiPoolSize = try environment.int("STORESYNC_API_DB_POOL_SIZE", range: 1...200) ?? 8
        let apiPool = PostgresPool(PostgresConfiguration(url: apiURL, poolSize: apiPoolSize, acquireTimeout: .seconds(5),
                                                         applicationName: "storesync-bench-api"))
        let tenant = try await APIBenchTenant.seed(customers: customers, pool: setupPool)

        let storeHTTP = try HTTPClient()
        let api = MobileStoresAPI(pool: apiPool, registrar: PurchaseRegistrar(http: storeHTTP), metrics: MetricsRegistry())
        var router = HTTPRouter()
        api.install(into: &router)
        router.route("GET", "/bench/ceiling") { _ in .json(200, #"{"customer_id":"static","entitlements":[]}"#) }
        var configuration = HTTPServerConfiguration()
        configuration.maxConnections = max(512, connections * 2)
        configuration.maxConnectionsPerClient = nil  // every benchmark connection comes from loopback
        let server = try HTTPServer(configuration: configuration, router: router)
        let base = "http://127.0.0.1:\(server.port)"
        let client = try HTTPClient()

        let token = try await tenant.accessToken(base: base, client: client)
        let readScript = tenant.readScript(token: token)
        let ceiling = try await WrkRun.run(url: base + "/bench/ceiling", script: "wrk.headers[\"Host\"] = \"\(tenant.host)\"",
                                           connections: connections, seconds: seconds)
        let before = CPUTime.now()
        let reads = try await WrkRun.run(url: base, script: readScript, connections: connections, seconds: seconds)
        let readCPU = CPUTime.now().total - before.total
        var appReads: WrkRun?
        if app {
            let pairs = try await tenant.issuePairs(pool: setupPool)
            try await setupPool.query("VACUUM ANALYZE account_tokens")
            appReads = try await WrkRun.run(url: base, script: tenant.appReadScript(pairs: pairs), connections: connections,
                                            seconds: seconds)
        }

        async let mixedReads = WrkRun.run(url: base, script: readScript, connections: connections, seconds: seconds)
        let registrations = try await tenant.register(for: .seconds(seconds), perSecond: registrationRate, base: base,
                                                      token: token, client: client)
        let mixed = try await mixedReads

        await client.shutdown()
        await server.stop(grace: .seconds(2))
        await storeHTTP.shutdown()
        await tenant.stop()
        await apiPool.close()
        await setupPool.close()

        func figures(_ run: WrkRun) -> JSONValue {
            .object([("requests_per_sec", .int(Int(run.requestsPerSecond))), ("p50_ms", .double(run.p50Milliseconds)),
                     ("p99_ms", .double(run.p99Milliseconds)), ("requests", .int(run.requests)), ("non_2xx", .int(run.non2xx))])
        }
        let cpuPerRead = reads.requests > 0 ? readCPU.seconds * 1_000_000 / Double(reads.requests) : 0
        var appFigures: [(String, JSONValue)] = []
        if let appReads {
            appFigures = [
                ("app_entitlement_reads", figures(appReads)),
                ("app_vs_backend_reads", .double(reads.requestsPerSecond > 0
                    ? (appReads.requestsPerSecond / reads.requestsPerSecond * 1000).rounded() / 1000 : 0)),
                ("app_goal", .string("app reads ≥ 0.8 × the backend's entitlement reads in the same run")),
            ]
        }
        Output.print(JSONValue.object([
            ("benchmark", .string("api")), ("customers", .int(customers)), ("connections", .int(connections)),
            ("seconds", .int(seconds)), ("api_pool_size", .int(apiPoolSize)),
            ("entitlement_reads", figures(reads)),
        ] + appFigures + [
            ("server_cpu_us_per_read", .double(cpuPerRead.rounded())),
            ("static_ceiling", figures(ceiling)),
            ("reads_vs_ceiling", .double(ceiling.requestsPerSecond > 0
                ? (reads.requestsPerSecond / ceiling.requestsPerSecond * 1000).rounded() / 1000 : 0)),
            ("mixed", .object([("entitlement_reads", figures(mixed)), ("registrations", registrations.json)])),
            ("goal", .string("≥ 5000 entitlement reads/s with p99 < 50 ms")),
            ("host_cpus", .int(ProcessInfo.processInfo.activeProcessorCount)),
        ]).text)
        return reads.non2xx == 0 && (appReads?.non2xx ?? 0) == 0 && registrations.failed == 0 ? 0 : 1
    }
}
