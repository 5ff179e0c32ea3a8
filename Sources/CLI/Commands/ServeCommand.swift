import API
import Foundation
import GooglePlay
import HTTP
import Ingest
import Logging
import Metrics
import Migrations
import Operations
import Postgres
import Sync
import Systemd

struct ServeCommand: Command {
    static let name = "serve"
    static let summary = "run the webhook endpoints (verify each store notification, store it as a job, answer 200 once committed) and the Mobile Stores API"
    static let usage = """
        usage: storesync serve [--listen HOST:PORT] [--grace-period D] [--max-connections-per-client N]

        Serves POST /webhook/apple and POST /webhook/google-play for every account (found by the Host
        header), plus GET /healthz, /readyz and /metrics; every answer but /metrics is JSON. Bodies over 64 KiB
        get 413; bodies that are not JSON of the store's outer shape get 400; an unknown host gets 404; each
        notification is verified at receipt against the account's store connection, and a forgery gets 401
        (400 when not a JWS, 404 for an app with no connection) with nothing stored; a database that is down
        or slow gets 503 within a few seconds (the stores retry). Started while the database is down, it
        listens and waits for it (/readyz 503); a schema mismatch or a refused login exits 2. On SIGTERM or
        SIGINT it stops accepting connections and finishes the requests in flight.

        With STORESYNC_API_DATABASE_URL set (a login role in storesync_api) it also serves the Mobile Stores
        API on the same port: POST /oauth/token and /api/v1/mobile-stores/… (see the README); without it
        those paths answer 404.

          --listen HOST:PORT   env STORESYNC_LISTEN        default 0.0.0.0:8080 (port 0 picks a free port;
                               an IPv6 address in brackets: [::1]:8080, or [::]:8080 for IPv6 and IPv4)
          --grace-period D     env STORESYNC_GRACE_PERIOD  default 10s
          --max-connections-per-client N
                               env STORESYNC_MAX_CONNECTIONS_PER_CLIENT  default 64, 0 = no limit
                               (behind a reverse proxy every client has the proxy's address: raise it or use 0)
          env STORESYNC_API_DATABASE_URL      the API's database login (unset: no API)
          env STORESYNC_API_DB_POOL_SIZE      default 8
          env STORESYNC_API_TOKEN_LIFETIME    access tokens' lifetime, default 1h (1m…24h)
          env STORESYNC_STORE_RATE_SHARE      share of each store's API rate limits purchase registration
                                              may use, default 1
          env STORESYNC_API_TRUSTED_PROXIES   the load balancers in front (addresses or CIDR ranges, comma
                                              separated): from them X-Forwarded-For names the client whose
                                              failed app authentications are counted; unset: the peer
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let listen = try Listen(try arguments.option("--listen") ?? environment.string("STORESYNC_LISTEN") ?? "0.0.0.0:8080",
                                "--listen")
        let grace = try Parse.duration(try arguments.option("--grace-period") ?? environment.string("STORESYNC_GRACE_PERIOD")
                                           ?? "10s", "grace period", range: .zero...(.seconds(600)))
        let perClient = try Parse.int(try arguments.option("--max-connections-per-client")
                                          ?? environment.string("STORESYNC_MAX_CONNECTIONS_PER_CLIENT") ?? "64",
                                      "--max-connections-per-client", range: 0...100_000)
        try arguments.finish()
        let apiURL = try environment.databaseURL("STORESYNC_API_DATABASE_URL")
        let apiPoolSize = try environment.int("STORESYNC_API_DB_POOL_SIZE", range: 1...200) ?? 8
        let tokenLifetime = try environment.duration("STORESYNC_API_TOKEN_LIFETIME", range: .seconds(60)...(.seconds(86_400)))
            ?? .seconds(3600)
        let rateShare = try Parse.fraction(environment.string("STORESYNC_STORE_RATE_SHARE") ?? "1", "STORESYNC_STORE_RATE_SHARE")
        let proxiesText = environment.string("STORESYNC_API_TRUSTED_PROXIES") ?? ""
        guard proxiesText.utf8.count <= 10_000, let clientAddresses = ClientAddressRule(parsing: proxiesText) else {
            throw UsageError("STORESYNC_API_TRUSTED_PROXIES must be IP addresses or CIDR ranges separated by commas, not "
                + proxiesText.prefix(100).debugDescription)
        }
        var postgres = try environment.postgres(defaultSize: 8, applicationName: "storesync-serve")
        postgres.acquireTimeout = .seconds(2)
        postgres.statementTimeout = .seconds(3)
        let pool = PostgresPool(postgres)

        let metrics = MetricsRegistry()
        var router = HTTPRouter()
        let keysHTTP = try HTTPClient()
        let ingest = IngestService(pool: pool, metrics: metrics, keyCaches: GoogleKeyCaches(http: keysHTTP), accepting: false)
        ingest.install(into: &router)
        let commits = Task { await ingest.run() }
        OperationsEndpoints.install(into: &router, pool: pool, metrics: metrics, started: { ingest.isAccepting })
        let api = try apiURL.map { url in
            try APIFace(url: url, poolSize: apiPoolSize, tokenLifetime: tokenLifetime, rateShare: rateShare,
                        clientAddresses: clientAddresses, metrics: metrics)
        }
        api?.service.install(into: &router)
        var serverConfiguration = listen.serverConfiguration
        serverConfiguration.onRejection = { ingest.count($0) }
        serverConfiguration.refusal = { status, message, path in
            MobileStoresAPI.owns(path) ? MobileStoresAPI.refusal(status: status, message: message)
                : HTTPResponse.error(status, message)
        }
        serverConfiguration.maxConnectionsPerClient = perClient == 0 ? nil : perClient
        let server = try HTTPServer(configuration: serverConfiguration, router: router)
        let logger = Logger(component: "serve")
        logger.info("listening", ["host": .string(listen.host), "port": .int(Int(server.port)),
                                  "mobile_stores_api": .bool(api != nil)])

        // Listening before the database is there: /healthz answers, /readyz and the webhooks say 503 (which
        // the stores retry) until it is, instead of the process exiting and leaving nothing to answer.
        let outcome = await runUntilTerminated(startup: {
            try await DatabaseStartup.waitUntilReady(pool, logger: logger)
            if let api {
                try await DatabaseStartup.waitUntilReady(api.pool, logger: logger)
                api.service.open()
            }
            ingest.open()
        }, ready: { ServiceNotifier.ready() })
        ServiceNotifier.stopping()
        logger.info("stopping: finishing requests in flight", ["grace_ms": .int(Int(grace.milliseconds))])
        await server.stop(grace: grace)
        await ingest.close()
        await commits.value
        await keysHTTP.shutdown()
        await api?.close()
        await pool.close()
        try outcome.get()
        logger.info("stopped")
        return 0
    }
}

/// `HOST:PORT` (or `[IPv6]:PORT`) for a listening socket, from option `name`.
package struct Listen {
    package let host: String
    package let port: UInt16

    package init(_ text: String, _ name: String) throws {
        do {
            let address = try ListenAddress(parsing: text)
            host = address.host
            port = address.port
        } catch {
            throw UsageError("\(name) must be HOST:PORT or [IPV6]:PORT, e.g. 0.0.0.0:8080 or [::]:8080, but "
                             + "\(error.message); got \(text.debugDescription)")
        }
    }

    package var serverConfiguration: HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.host = host
        configuration.port = port
        return configuration
    }
}

/// Runs `startup`, then `ready`, and returns at SIGTERM or SIGINT — also one that arrives while `startup`
/// still runs, which cancels it. The result is `startup`'s failure, if it failed, which ends the wait too;
/// the caller shuts down either way and throws it afterwards.
func runUntilTerminated(startup: @escaping @Sendable () async throws -> Void, ready: @escaping @Sendable () -> Void) async
    -> Result<Void, any Error>
{
    enum Event: Sendable {
        case started
        case failed(any Error)
        case terminate
    }
    let (events, continuation) = AsyncStream.makeStream(of: Event.self)
    let signals = TerminationSignals { continuation.yield(.terminate) }
    let starting = Task {
        do {
            try await startup()
            continuation.yield(.started)
        } catch is CancellationError {
        } catch {
            continuation.yield(.failed(error))
        }
    }
    defer { signals.cancel() }
    for await event in events {
        switch event {
        case .started: ready()
        case .failed(let error): return .failure(error)
        case .terminate:
            starting.cancel()
            return .success(())
        }
    }
    return .success(())
}

/// Suspends until SIGTERM or SIGINT; `ready` runs once the signal handlers are in place.
package func waitForTermination(ready: () -> Void) async {
    let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
    let signals = TerminationSignals { continuation.yield() }
    ready()
    for await _ in stream { break }
    signals.cancel()
}
