import Foundation
import HTTP
import Postgres
import TestSupport
import Testing

/// `storesync-dev demo`: what `deploy/dev.sh run` shows a newcomer. Against real `storesync serve` and
/// `storesync work` processes on a database of the test's own, it seeds a database without accounts, plays
/// its purchases through the simulator, ingest and worker, and reports them; it never touches a configured
/// database; started again with --keep-running it points the demo connection at its new simulator.
@Suite struct DemoCLITests {
    /// `storesync serve` and `storesync work` on the test's database, as `deploy/dev.sh run` starts them.
    struct Daemons {
        let serve: ChildProcess
        let work: ChildProcess
        let ingestURL: String

        static func start(_ database: TestDatabase) async throws -> Daemons {
            let environment = ["DATABASE_URL": database.url, "STORESYNC_LOG_LEVEL": "info"]
            let serve = try ChildProcess("storesync", ["serve", "--listen", "127.0.0.1:0", "--grace-period", "1s"],
                                         environment: environment)
            let work = try ChildProcess("storesync", ["work", "--metrics-listen", "off", "--poll-interval", "200ms",
                                                      "--grace-period", "1s"], environment: environment)
            var port: Substring?
            try await eventually("serve to log its port; stderr: \(serve.stderr)", timeout: .seconds(30)) {
                port = serve.stderr.split(separator: "\n").first { $0.contains("\"message\":\"listening\"") }?
                    .firstMatch(of: /"port":([0-9]+)/)?.output.1
                return port != nil
            }
            return Daemons(serve: serve, work: work, ingestURL: "http://127.0.0.1:\(port ?? "")/webhook/apple")
        }

        func stop() async throws {
            serve.signal(SIGTERM)
            work.signal(SIGTERM)
            #expect(try await serve.wait(timeout: .seconds(30)) == 0, "serve: \(serve.stderr.suffix(2000))")
            #expect(try await work.wait(timeout: .seconds(30)) == 0, "work: \(work.stderr.suffix(2000))")
        }
    }

    private func count(_ database: TestDatabase, _ sql: String) async throws -> Int {
        try await database.pool.query(sql)[0].decode(0)
    }

    private func demo(_ arguments: [String], _ database: TestDatabase) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess.run("storesync-dev", ["demo", "--simulator-listen", "127.0.0.1:0"] + arguments,
                                   environment: ["DATABASE_URL": database.url], timeout: .seconds(150))
    }

    @Test func anEmptyDatabaseGetsTheDemoMirroredOnceAndAKeptRunningSimulatorIsReachable() async throws {
        try await TestDatabase.with { database in
            let daemons = try await Daemons.start(database)
            do {
                let seeded = try await demo(["--ingest", daemons.ingestURL, "--timeout", "90s"], database)
                #expect(seeded.status == 0, "stdout: \(seeded.stdout)\nstderr: \(seeded.stderr.suffix(3000))")
                #expect(seeded.stdout.contains("Mirrored: 2 subscriptions (1 revoked), 5 invoices (4 for customers, 1 on "
                    + "purchases pending claim), 1 refund, 1 purchase pending claim."), "stdout: \(seeded.stdout)")
                #expect(seeded.stdout.contains("The App Store simulator stopped with this command"))
                try await expectTheDemoMirror(database)

                let again = try await demo(["--ingest", daemons.ingestURL], database)
                #expect(again.status == 0, "\(again.stderr.suffix(2000))")
                #expect(again.stdout.contains("the demo account demo.localhost exists already; nothing to seed"))
                #expect(again.stdout.contains("Mirrored: 2 subscriptions (1 revoked)"))
                try await expectTheDemoMirror(database)

                try await aKeptRunningDemoServesTheDemoConnection(database, daemons)
            } catch {
                try await daemons.stop()
                throw error
            }
            try await daemons.stop()
        }
    }

    /// Customer A: monthly, renewed twice; customer B: yearly, refunded (revoked); one untagged purchase.
    private func expectTheDemoMirror(_ database: TestDatabase) async throws {
        #expect(try await count(database, "SELECT count(*) FROM accounts") == 1)
        #expect(try await count(database, "SELECT count(*) FROM customer_subscriptions") == 2)
        #expect(try await count(database, "SELECT count(*) FROM customer_subscriptions WHERE store_state = 'revoked'") == 1)
        let invoices = try await database.pool.query("""
            SELECT coalesce(c.name, '-'), count(*)::int, sum(i.amount_minor)::bigint FROM invoices i
            LEFT JOIN customers c ON c.id = i.customer_id GROUP BY c.name ORDER BY coalesce(c.name, '-') COLLATE "C"
            """).map { (try $0.decode(0, as: String.self), try $0.decode(1, as: Int.self), try $0.decode(2, as: Int64.self)) }
        #expect(invoices.map(\.0) == ["-", "Customer A", "Customer B"])
        #expect(invoices.map(\.1) == [1, 3, 1])
        #expect(invoices.map(\.2) == [999, 2_997, 9_999])
        let refunds = try await database.pool.query("""
            SELECT c.name, r.amount_minor FROM refunds r JOIN invoices i ON i.id = r.invoice_id
            JOIN customers c ON c.id = i.customer_id
            """).map { (try $0.decode(0, as: String.self), try $0.decode(1, as: Int64.self)) }
        #expect(refunds.map(\.0) == ["Customer B"] && refunds.map(\.1) == [9_999])
        #expect(try await count(database, "SELECT count(*) FROM store_purchases WHERE customer_id IS NULL") == 1)
        #expect(try await count(database, "SELECT count(*) FROM dead_letters") == 0)
    }

    /// Started again with --keep-running, the demo repoints the connection at its new simulator (URL, root,
    /// key), and a purchase driven from another process is mirrored through it.
    private func aKeptRunningDemoServesTheDemoConnection(_ database: TestDatabase, _ daemons: Daemons) async throws {
        let before = try await database.pool.query("SELECT api_base_url, trusted_roots_pem FROM store_connections")
        let (oldURL, oldRoots) = (try before[0].decode(0, as: String.self), try before[0].decode(1, as: String.self))
        let running = try ChildProcess("storesync-dev", ["demo", "--keep-running", "--ingest", daemons.ingestURL,
                                                     "--simulator-listen", "127.0.0.1:0"],
                                       environment: ["DATABASE_URL": database.url])
        try await eventually("the demo to say its simulator runs; stdout: \(running.stdout) stderr: \(running.stderr.suffix(2000))",
                             timeout: .seconds(60)) { running.stdout.contains("until Ctrl-C") }
        let url = try #require(running.stdout.firstMatch(of: /runs at (http:\/\/[^ ]+) until Ctrl-C/)?.output.1).description
        let after = try await database.pool.query("SELECT api_base_url, trusted_roots_pem FROM store_connections")
        #expect(try after[0].decode(0, as: String.self) == url && url != oldURL)
        #expect(try after[0].decode(1, as: String.self) != oldRoots)

        let token: String = try await database.pool.query("""
            SELECT t.token::text FROM account_tokens t JOIN customers c ON c.id = t.customer_id WHERE c.name = 'Customer A'
            """)[0].decode(0)
        let bought = try await ChildProcess.run("storesync-dev", [
            "simulator", "scenario", "subscribe", "--url", url, "--product-id", "demo.pro.monthly", "--price", "9990",
            "--currency", "USD", "--account-token", token,
        ])
        #expect(bought.status == 0, "\(bought.stdout) \(bought.stderr)")
        #expect(bought.stdout.contains("\"httpStatus\":200"), "\(bought.stdout)")
        do {
            try await eventually("the worker to mirror the new purchase", timeout: .seconds(60)) {
                try await count(database, "SELECT count(*) FROM customer_subscriptions") == 3
            }
        } catch let timeout as TimedOut {
            let jobs: String = try await database.pool.query("""
                SELECT coalesce(string_agg(kind || ': ' || coalesce(last_error, '-'), '; '), 'none') FROM jobs
                """)[0].decode(0)
            Issue.record("\(timeout); jobs: \(jobs); work: \(daemons.work.stderr.suffix(3000))")
        }
        #expect(try await count(database, "SELECT count(*) FROM dead_letters") == 0)
        running.signal(SIGTERM)
        #expect(try await running.wait(timeout: .seconds(30)) == 0, "\(running.stderr.suffix(2000))")
    }

    @Test func aConfiguredDatabaseIsLeftAlone() async throws {
        try await TestDatabase.with { database in
            _ = try await database.pool.query("INSERT INTO accounts (host) VALUES ('billing.example.com')")
            let readiness = try NotReadyIngest()
            let result = try await demo(["--ingest", readiness.url, "--keep-running"], database)
            await readiness.stop()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("the database has 1 account and none is the demo's (demo.localhost)"))
            #expect(try await count(database, "SELECT count(*) FROM accounts") == 1)
            #expect(try await count(database, "SELECT count(*) FROM store_connections") == 0)
            #expect(try await count(database, "SELECT count(*) FROM customers") == 0)
        }
    }

    @Test func withoutAReadyIngestNothingIsSeeded() async throws {
        try await TestDatabase.with { database in
            let readiness = try NotReadyIngest()
            let result = try await demo(["--ingest", readiness.url, "--timeout", "3s"], database)
            await readiness.stop()
            #expect(result.status == 1)
            #expect(result.stderr.contains("no ready `storesync serve` at \(readiness.readyURL)"), "\(result.stderr)")
            #expect(result.stderr.contains("HTTP 503"), "\(result.stderr)")
            #expect(try await count(database, "SELECT count(*) FROM accounts") == 0)
        }
    }

    @Test("bad demo arguments exit 2 with the reason", arguments: [
        (["demo", "--ingest", "ftp://example.com/webhook/apple"], "--ingest must be an http:// or https:// URL"),
        (["demo", "--host", "bad host!"], "--host must be a host name"),
        (["demo", "--host", "12345"], "--host must be a host name"),
        (["demo", "--host", "-demo.localhost"], "--host must be a host name"),
        (["demo", "--simulator-listen", "nowhere"], "--simulator-listen must be HOST:PORT"),
        (["demo", "--timeout", "0s"], "--timeout must be between"),
        (["demo", "--bogus"], "unknown option --bogus"),
    ])
    func badArguments(_ arguments: [String], _ message: String) async throws {
        let result = try await ChildProcess.run("storesync-dev", arguments, environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }

    @Test func helpSaysHowToSwitchItOff() async throws {
        let result = try await ChildProcess.run("storesync-dev", ["demo", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("usage: storesync-dev demo") && result.stdout.contains("STORESYNC_DEMO=off"))
    }
}

/// An ingest stand-in whose `/readyz` says 503, as `storesync serve` does while its database is unreachable.
private struct NotReadyIngest {
    let server: HTTPServer

    init() throws {
        var router = HTTPRouter()
        router.route("GET", "/readyz") { _ in HTTPResponse(status: 503) }
        server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
    }

    var url: String { "http://127.0.0.1:\(server.port)/webhook/apple" }
    var readyURL: String { "http://127.0.0.1:\(server.port)/readyz" }

    func stop() async { await server.stop(grace: .seconds(1)) }
}
