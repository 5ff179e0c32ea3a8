import Foundation
import GooglePlay
import HTTP
import Ingest
import Metrics
import Postgres
import TestSupport
import Testing

/// A real PostgreSQL crashed and started again under a steady webhook load: the endpoint answers 503 while it
/// is down and stores again within moments of it accepting connections — the pool probes on demand instead of
/// waiting out a backoff grown during the outage — and every webhook it acknowledged is stored.
@Suite struct IngestRestartTests {
    /// One answered request: when the answer came, its status, and the body when it was acknowledged.
    struct Answer: Sendable {
        let at: ContinuousClock.Instant
        let status: Int
        let body: Data
    }

    @Test("after a crash and restart of PostgreSQL under load, webhooks are stored again at once, none acknowledged lost")
    func restartUnderLoad() async throws {
        let cluster = try await PrivatePostgres.start()
        let keyServer = try SignedWebhooks.startKeyServer()
        let host = "restart.test"
        let pool = PostgresPool(PostgresConfiguration(url: cluster.url, poolSize: 8, acquireTimeout: .seconds(2),
                                                      applicationName: "storesync-serve", statementTimeout: .seconds(3)))
        let keysHTTP = try HTTPClient()
        let client = try HTTPClient()
        let ingest = IngestService(pool: pool, metrics: MetricsRegistry(), keyCaches: GoogleKeyCaches(http: keysHTTP))
        var router = HTTPRouter()
        ingest.install(into: &router)
        let commits = Task { await ingest.run() }
        let server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        let answers = Answers()
        func statuses(after instant: ContinuousClock.Instant) -> [Int] {
            answers.all.filter { $0.at > instant }.map(\.status)
        }
        do {
            try await SignedWebhooks.addAccount(host: host, jwksURL: "http://127.0.0.1:\(keyServer.port)/certs", pool: pool)
            let senders = (0..<4).map { _ in
                Task {
                    while answers.loading {
                        let body = SignedWebhooks.appleBody()
                        let status = (try? await client.send(HTTPClientRequest(
                            method: "POST", url: "http://127.0.0.1:\(server.port)/webhook/apple",
                            headers: [("Host", host), ("Content-Type", "application/json")], body: body,
                            timeout: .seconds(10))))?.status ?? 0
                        answers.append(Answer(at: .now, status: status, body: body))
                    }
                }
            }
            try await eventually("the load to be stored before the crash") { statuses(after: .now - .seconds(3600)).count { $0 == 200 } >= 20 }
            let crashed = ContinuousClock.now
            try await cluster.crash()
            // Down for a few seconds under load, long enough for a backoff to have grown past the outage.
            try await eventually("503s over three seconds while the database is down") {
                statuses(after: crashed).contains(503) && ContinuousClock.now - crashed > .seconds(3)
            }
            try await cluster.startServer()
            let up = ContinuousClock.now
            try await eventually("webhooks to be stored again after the restart", timeout: .seconds(30)) {
                statuses(after: up).count { $0 == 200 } >= 20
            }
            answers.stopLoading()
            for sender in senders { await sender.value }

            let all = answers.all
            let firstStored = try #require(all.first { $0.at > up && $0.status == 200 })
            let window = firstStored.at - up
            print(#"{"test":"ingest restart","stored_again_after_ms":\#(Int(window.milliseconds)),"answers":\#(all.count)}"#)
            #expect(window < .seconds(3), "the 503 window lasted \(window) after PostgreSQL accepted connections")
            #expect(all.allSatisfy { [200, 503].contains($0.status) }, "\(Set(all.map(\.status)))")
            let acknowledged = all.filter { $0.status == 200 }.map(\.body)
            let stored: Int = try await pool.query("SELECT count(*) FROM jobs WHERE raw = ANY($1::bytea[])",
                                                   [PostgresArray(acknowledged)])[0].decode(0)
            #expect(stored == acknowledged.count)
        } catch {
            answers.stopLoading()
            await shutDown()
            throw error
        }
        await shutDown()

        func shutDown() async {
            await server.stop(grace: .seconds(1))
            await ingest.close()
            await commits.value
            await client.shutdown()
            await keysHTTP.shutdown()
            await keyServer.stop(grace: .seconds(1))
            await pool.close()
            await cluster.destroy()
        }
    }
}

/// The load's answers, and whether it still runs; shared by its sender tasks.
private final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [IngestRestartTests.Answer] = []
    private var running = true

    var loading: Bool { lock.withLock { running } }
    var all: [IngestRestartTests.Answer] { lock.withLock { answers } }

    func append(_ answer: IngestRestartTests.Answer) { lock.withLock { answers.append(answer) } }
    func stopLoading() { lock.withLock { running = false } }
}
