import Accounts
import AppStore
import CLI
import Foundation
import GooglePlay
import HTTP
import Ingest
import Metrics
import Migrations
import Postgres
import Synchronization
import TestPKI

/// `storesync-dev bench ingest`: the webhook endpoint's throughput over loopback, driven by StoreSync's own
/// libcurl client, each answer meaning a verified notification committed as a job. The body is a genuine
/// App Store notification (12 KB, nested signed transaction and renewal info) for a Sandbox connection that
/// trusts the benchmark's own generated root, so every request pays for verification at receipt.
enum IngestBenchmark {

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let requests = try Parse.int(try arguments.option("--requests") ?? "20000", "--requests", range: 1...10_000_000)
        let connections = try Parse.int(try arguments.option("--connections") ?? "64", "--connections", range: 1...1024)
        try arguments.finish()
        var postgres = try environment.postgres(defaultSize: 8, applicationName: "storesync-bench")
        postgres.acquireTimeout = .seconds(5)
        let pool = PostgresPool(postgres)
        try await pool.withConnection { try await Migrator().requireCurrent($0) }
        // A new account each run, whose connection trusts this run's PKI.
        let host = "ingest-\(UInt32.random(in: 0...UInt32.max)).bench.invalid"
        let pki = try LocalApplePKI.generate()
        let roots = pki.root.pem
        _ = try await pool.transaction { db in
            var connection = Catalog.NewConnection(accountID: try Catalog.addAccount(host: host, on: db), store: .apple,
                                                   appIdentifier: "com.example.bench", environment: .sandbox)
            connection.trustedRootsPEM = roots
            return try Catalog.addConnection(connection, on: db).id
        }

        var router = HTTPRouter()
        let keysHTTP = try HTTPClient()
        let ingest = IngestService(pool: pool, metrics: MetricsRegistry(), keyCaches: GoogleKeyCaches(http: keysHTTP))
        ingest.install(into: &router)
        let commits = Task { await ingest.run() }
        var configuration = HTTPServerConfiguration()
        configuration.maxConnections = max(512, connections * 2)
        configuration.maxConnectionsPerClient = nil  // every benchmark connection comes from loopback
        let server = try HTTPServer(configuration: configuration, router: router)
        var clientConfiguration = HTTPClientConfiguration()
        clientConfiguration.timeout = .seconds(30)
        let client = try HTTPClient(configuration: clientConfiguration)
        let body = Data(#"{"signedPayload":"\#(try VerifyBenchmark.signedNotification(pki))"}"#.utf8)
        let request = HTTPClientRequest(method: "POST", url: "http://127.0.0.1:\(server.port)/webhook/apple",
                                        headers: [("Host", host), ("Content-Type", "application/json")], body: body)

        let next = Ticket()
        let clock = ContinuousClock()
        let started = clock.now
        let results = await withTaskGroup(of: (latencies: [Double], failures: Int).self) { group in
            for _ in 0..<connections {
                group.addTask {
                    var latencies: [Double] = []
                    var failures = 0
                    while next.take() < requests {
                        let sent = clock.now
                        let status = (try? await client.send(request))?.status
                        if status == 200 { latencies.append((clock.now - sent).seconds * 1000) } else { failures += 1 }
                    }
                    return (latencies, failures)
                }
            }
            return await group.reduce(into: [(latencies: [Double], failures: Int)]()) { $0.append($1) }
        }
        let wall = clock.now - started
        await server.stop(grace: .seconds(5))
        await ingest.close()
        await commits.value
        await client.shutdown()
        await keysHTTP.shutdown()
        await pool.close()

        let latencies = results.flatMap(\.latencies).sorted()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : (latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] * 100).rounded() / 100
        }
        Output.print(Output.Value.object([
            ("benchmark", .string("ingest")),
            ("accepted_per_sec", .double((Double(latencies.count) / wall.seconds).rounded())),
            ("requests", .int(requests)), ("accepted", .int(latencies.count)),
            ("failed", .int(results.map(\.failures).reduce(0, +))), ("connections", .int(connections)),
            ("latency_ms", .object([("p50", .double(percentile(0.5))), ("p99", .double(percentile(0.99)))])),
            ("wall_s", .double(wall.seconds)), ("body_bytes", .int(body.count)),
        ]).text)
        return 0
    }
}

/// Hands out request numbers to the concurrent senders.
private final class Ticket: Sendable {
    private let counter = Atomic<Int>(0)

    func take() -> Int { counter.add(1, ordering: .relaxed).oldValue }
}
