import Foundation
import GooglePlay
import HTTP
import Ingest
import Metrics
import Operations
import Postgres
import Synchronization
import TestSupport
import Testing

/// The webhook endpoints over real HTTP into a real database: what is acknowledged is stored byte for byte,
/// what is refused stores nothing, and a database outage is a 503, never a lost notification.
@Suite struct IngestServiceTests {
    static let host = "billing.test"
    static var appleBody: Data { SignedWebhooks.appleBody() }
    static let googleBody = SignedWebhooks.googleBody()
    static let pushAuthorization = SignedWebhooks.authorization(host: host)

    /// A running `serve`-equivalent (ingest + operations endpoints) on a fresh database with one account.
    struct Service {
        let database: TestDatabase
        let server: HTTPServer
        let client: HTTPClient
        let ingestPool: PostgresPool
        let metrics: MetricsRegistry
        let ingest: IngestService

        func post(_ path: String, _ body: Data, host: String = IngestServiceTests.host,
                  headers: [(name: String, value: String)] = []) async throws -> HTTPClientResponse {
            try await client.send(HTTPClientRequest(
                method: "POST", url: "http://127.0.0.1:\(server.port)\(path)",
                headers: [("Host", host), ("Content-Type", "application/json")] + headers, body: body,
                timeout: .seconds(20)))
        }

        func get(_ path: String) async throws -> HTTPClientResponse {
            try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)\(path)"))
        }

        func jobCount() async throws -> Int {
            try await database.pool.query("SELECT count(*) FROM jobs")[0].decode(0)
        }
    }

    /// - Parameter accepting: false starts the service as `serve` does, storing nothing until `ingest.open()`.
    func withService(accepting: Bool = true, _ body: (Service) async throws -> Void) async throws {
        try await TestDatabase.with { database in
            let keyServer = try SignedWebhooks.startKeyServer()
            try await SignedWebhooks.addAccount(host: Self.host, jwksURL: "http://127.0.0.1:\(keyServer.port)/certs",
                                                pool: database.pool)
            let ingestPool = PostgresPool(PostgresConfiguration(url: database.url, poolSize: 4, acquireTimeout: .seconds(2),
                                                                applicationName: "storesync-serve",
                                                                statementTimeout: .seconds(3)))
            let metrics = MetricsRegistry()
            var router = HTTPRouter()
            let keysHTTP = try HTTPClient()
            let ingest = IngestService(pool: ingestPool, metrics: metrics, keyCaches: GoogleKeyCaches(http: keysHTTP),
                                       accepting: accepting)
            ingest.install(into: &router)
            let commits = Task { await ingest.run() }
            OperationsEndpoints.install(into: &router, pool: ingestPool, metrics: metrics, started: { ingest.isAccepting })
            var configuration = HTTPServerConfiguration()
            configuration.onRejection = { ingest.count($0) }
            let server = try HTTPServer(configuration: configuration, router: router)
            let client = try HTTPClient()
            let service = Service(database: database, server: server, client: client, ingestPool: ingestPool, metrics: metrics,
                                  ingest: ingest)
            func shutDown() async {
                await server.stop(grace: .seconds(1))
                await ingest.close()
                await commits.value
                await client.shutdown()
                await keysHTTP.shutdown()
                await keyServer.stop(grace: .seconds(1))
                await ingestPool.close()
            }
            do {
                try await body(service)
            } catch {
                await shutDown()
                throw error
            }
            await shutDown()
        }
    }

    @Test func bothEndpointsStoreExactlyWhatArrived() async throws {
        try await withService { (service: Service) async throws in
            let appleBody = Self.appleBody
            let apple = try await service.post("/webhook/apple", appleBody)
            #expect(apple.status == 200, "\(String(decoding: apple.body, as: UTF8.self))")
            let google = try await service.post("/webhook/google-play", Self.googleBody,
                                                headers: [("Authorization", Self.pushAuthorization)])
            #expect(google.status == 200, "\(String(decoding: google.body, as: UTF8.self))")
            let rows = try await service.database.pool.query("""
                SELECT kind, raw, headers::text, (payload->>'account_id')::bigint, (payload->>'received_at')::timestamptz
                FROM jobs ORDER BY id
                """)
            #expect(rows.count == 2)
            #expect(try rows[0].decode(0, as: String.self) == "apple.notification")
            #expect(try rows[0].decode(1, as: Data.self) == appleBody)
            #expect(try rows[0].decodeOptional(2, as: String.self) == nil)
            #expect(try rows[1].decode(0, as: String.self) == "google.notification")
            #expect(try rows[1].decode(1, as: Data.self) == Self.googleBody)
            #expect(try rows[1].decode(2, as: String.self) == #"{"authorization": "\#(Self.pushAuthorization)"}"#)
            let accountID = try await service.database.pool.query("SELECT id FROM accounts")[0].decode(0, as: Int64.self)
            #expect(try rows[0].decode(3, as: Int64.self) == accountID)
            #expect(abs(try rows[0].decode(4, as: Date.self).timeIntervalSinceNow) < 60)
        }
    }

    @Test func identicalDeliveriesAreEachStored() async throws {
        try await withService { (service: Service) async throws in
            for _ in 0..<5 { #expect(try await service.post("/webhook/apple", Self.appleBody).status == 200) }
            #expect(try await service.jobCount() == 5)
        }
    }

    @Test func unknownHostGets404AndNothingIsStored() async throws {
        try await withService { (service: Service) async throws in
            let response = try await service.post("/webhook/apple", Self.appleBody, host: "stranger.test")
            #expect(response.status == 404)
            #expect(try await service.jobCount() == 0)
        }
    }

    /// A fully qualified name may end in a dot (RFC 3986 §3.2.2); it names the same host, so the same account.
    @Test(arguments: ["billing.test.", "Billing.TEST.:8080"])
    func aTrailingDotNamesTheSameAccount(host: String) async throws {
        try await withService { (service: Service) async throws in
            let response = try await service.post("/webhook/apple", Self.appleBody, host: host)
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            let stored = try await service.database.pool.query("""
                SELECT a.host FROM jobs j JOIN accounts a ON a.id = (j.payload->>'account_id')::bigint
                """)
            #expect(stored.count == 1)
            #expect(try stored.first?.decode(0, as: String.self) == Self.host)
        }
    }

    @Test(arguments: ["bad_host.test", "billing.test:80x", "[::1]", "billing.test..", "..", ".", "billing..test",
                      "-billing.test"])
    func malformedHostGets400SayingSoAndNothingIsStored(host: String) async throws {
        try await withService { (service: Service) async throws in
            let response = try await service.post("/webhook/apple", Self.appleBody, host: host)
            #expect(response.status == 400)
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"malformed Host header"}"#)
            #expect(try await service.jobCount() == 0)
        }
    }

    @Test func requestsTheServerRefusesItselfAreCountedUnderFixedLabels() async throws {
        try await withService { (service: Service) async throws in
            let oversized = Data(repeating: UInt8(ascii: " "), count: 64 * 1024 + 1)
            #expect(try await service.post("/webhook/apple", oversized).status == 413)
            #expect(try await service.get("/webhook/apple").status == 405)
            #expect(try await service.get("/no/such/path").status == 404)
            let text = String(decoding: try await service.get("/metrics").body, as: UTF8.self)
            #expect(text.contains(#"storesync_http_requests_total{route="/webhook/apple",status="413"} 1"#))
            #expect(text.contains(#"storesync_http_requests_total{route="/webhook/apple",status="405"} 1"#))
            #expect(text.contains(#"storesync_http_requests_total{route="unmatched",status="404"} 1"#))
            #expect(!text.contains("/no/such/path"))
        }
    }

    @Test(arguments: [
        ("/webhook/apple", Data("not json".utf8), 400),
        ("/webhook/apple", Data(#"{"signedPayload":"x"}"#.utf8), 400),
        ("/webhook/google-play", Data(#"{"message":{}}"#.utf8), 400),
        ("/webhook/apple", Data(repeating: UInt8(ascii: " "), count: 64 * 1024 + 1), 413),
    ])
    func badBodiesAreRefusedAndNothingIsStored(path: String, body: Data, status: Int) async throws {
        try await withService { (service: Service) async throws in
            let response = try await service.post(path, body)
            #expect(response.status == status)
            if status == 400 { #expect(String(decoding: response.body, as: UTF8.self).hasPrefix(#"{"error":"#)) }
            #expect(try await service.jobCount() == 0)
        }
    }

    @Test func databaseOutageAnswers503AndNothingIsLostWhenItReturns() async throws {
        try await withService { (service: Service) async throws in
            let admin = try await PostgresConnection.connect(url: TestDatabase.adminURL)
            try await admin.query("ALTER DATABASE \(service.database.name) ALLOW_CONNECTIONS false")
            try await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                                  [service.database.name])
            let started = ContinuousClock.now
            let during = try await service.post("/webhook/apple", Self.appleBody)
            #expect(during.status == 503)
            #expect(ContinuousClock.now - started < .seconds(10))
            try await admin.query("ALTER DATABASE \(service.database.name) ALLOW_CONNECTIONS true")
            await admin.close()
            // The store retries; once the database is back the retry is stored.
            try await eventually("a retried delivery to be stored after the outage") {
                try await service.post("/webhook/apple", Self.appleBody).status == 200
            }
            // The test pool's own idle connection died in the outage too: count on a fresh one.
            let fresh = try await PostgresConnection.connect(url: service.database.url)
            #expect(try await fresh.query("SELECT count(*) FROM jobs")[0].decode(0, as: Int.self) == 1)
            await fresh.close()
        }
    }

    @Test func gracefulStopMidBurstLosesNoAcknowledgedRequest() async throws {
        try await withService { (service: Service) async throws in
            // The 40th answer starts the stop while the rest of the burst is still in flight.
            let answered = Tally()
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<120 {
                    group.addTask {
                        let status: Int
                        do {
                            status = try await service.post("/webhook/apple", Self.appleBody).status
                        } catch {
                            status = 0  // refused after the stop began: never acknowledged
                        }
                        if answered.increment() == 40 {
                            Task { await service.server.stop(grace: .seconds(10)) }
                        }
                        return status
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let acknowledged = statuses.count { $0 == 200 }
            #expect(acknowledged > 0)
            #expect(statuses.allSatisfy { $0 == 200 || $0 == 0 || $0 == 503 })
            #expect(try await service.jobCount() == acknowledged)
        }
    }

    /// Ready means a webhook sent now is stored: while `serve` is still opening (its database already reachable),
    /// `/readyz` says 503 as the webhooks do, and 200 from the moment they are stored.
    @Test func readinessWaitsUntilWebhooksAreStored() async throws {
        try await withService(accepting: false) { (service: Service) async throws in
            let early = try await service.get("/readyz")
            #expect(early.status == 503)
            #expect(String(decoding: early.body, as: UTF8.self) == #"{"error":"not ready: starting"}"#)
            #expect(try await service.post("/webhook/apple", Self.appleBody).status == 503)
            service.ingest.open()
            #expect(try await service.get("/readyz").status == 200)
            #expect(try await service.post("/webhook/apple", Self.appleBody).status == 200)
        }
    }

    @Test func operationsEndpointsAnswer() async throws {
        try await withService { (service: Service) async throws in
            #expect(try await service.get("/healthz").status == 200)
            #expect(try await service.get("/readyz").status == 200)
            _ = try await service.post("/webhook/apple", Self.appleBody)
            let metrics = try await service.get("/metrics")
            #expect(metrics.status == 200)
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains(#"storesync_http_requests_total{route="/webhook/apple",status="200"} 1"#))
            #expect(text.contains("storesync_ingest_duration_seconds_count"))
        }
    }
}

/// Counts answers across the burst's tasks.
private final class Tally: Sendable {
    private let count = Mutex(0)

    func increment() -> Int { count.withLock { $0 += 1; return $0 } }
}
