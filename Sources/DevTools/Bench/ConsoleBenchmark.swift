import Accounts
import CLI
import Console
import Foundation
import GooglePlay
import HTTP
import Logging
import Migrations
import Postgres
import TestPKI

/// `storesync-dev bench console`: every console page's time to answer, on a database the size issue 23 names — a
/// million queued jobs (a day's spread of resyncs) and ten thousand dead letters — plus purchases with their
/// timelines and charges, so the search and story pages read real indexes.
enum ConsoleBenchmark {
    /// The goal each page's p99 is held to.
    static let goalMilliseconds = 100.0

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let jobs = try Parse.int(try arguments.option("--jobs") ?? "1000000", "--jobs", range: 0...10_000_000)
        let deadLetters = try Parse.int(try arguments.option("--dead-letters") ?? "10000", "--dead-letters", range: 1...1_000_000)
        let purchases = try Parse.int(try arguments.option("--purchases") ?? "10000", "--purchases", range: 1...1_000_000)
        let receipts = try Parse.int(try arguments.option("--receipts") ?? "1000000", "--receipts", range: 0...50_000_000)
        let requests = try Parse.int(try arguments.option("--requests") ?? "30", "--requests", range: 3...10_000)
        try arguments.finish()
        let pool = PostgresPool(try environment.postgres(defaultSize: 4, applicationName: "storesync-bench-console"))
        do {
            try await pool.withConnection { try await Migrator().requireCurrent($0) }
            let seedStarted = ContinuousClock.now
            let seeded = try await seed(pool: pool, jobs: jobs, deadLetters: deadLetters, purchases: purchases,
                                        receipts: receipts)
            let seeding = ContinuousClock.now - seedStarted
            let keysHTTP = try HTTPClient()
            let console = Console(configuration: Console.Configuration(credentials: nil, localOperator: "bench"), pool: pool,
                                  keyCaches: GoogleKeyCaches(http: keysHTTP), logger: Logger(component: "console"))
            await console.warm()
            let server = try HTTPServer(configuration: HTTPServerConfiguration(), router: console.router)
            let client = try HTTPClient()
            let base = "http://127.0.0.1:\(server.port)"
            var pages: [(String, Output.Value)] = []
            var worst = 0.0
            var failures: [String] = []
            for (name, path) in seeded.pages {
                let timing = try await time(base + path, requests: requests, client: client)
                worst = max(worst, timing.p99)
                if timing.status >= 400 { failures.append("\(name) answered \(timing.status)") }
                pages.append((name, .object([("path", .string(path)), ("status", .int(timing.status)),
                                             ("p50_ms", .double(timing.p50)), ("p99_ms", .double(timing.p99)),
                                             ("bytes", .int(timing.bytes))])))
            }
            await client.shutdown()
            await server.stop(grace: .seconds(1))
            await keysHTTP.shutdown()
            await pool.close()
            Output.print(Output.Value.object([
                ("benchmark", .string("console")), ("jobs", .int(jobs)), ("dead_letters", .int(deadLetters)),
                ("purchases", .int(purchases)), ("receipts", .int(receipts)), ("requests_per_page", .int(requests)),
                ("seeding_s", .double((seeding.seconds * 10).rounded() / 10)),
                ("goal_p99_ms", .double(goalMilliseconds)), ("worst_p99_ms", .double(worst)),
                ("all_pages_within_goal", .bool(worst <= goalMilliseconds && failures.isEmpty)),
                ("pages", .object(pages)), ("failures", .array(failures.map { .string($0) })),
                ("host_cpus", .int(ProcessInfo.processInfo.activeProcessorCount)),
            ]).text)
            return failures.isEmpty ? 0 : 1
        } catch {
            await pool.close()
            throw error
        }
    }

    /// Sequential requests, one at a time as a person clicks: after two unmeasured ones, `requests` timed.
    private static func time(_ url: String, requests: Int, client: HTTPClient) async throws
        -> (status: Int, p50: Double, p99: Double, bytes: Int)
    {
        var times: [Double] = []
        var status = 0
        var bytes = 0
        for index in 0..<(requests + 2) {
            let started = ContinuousClock.now
            let response = try await client.send(HTTPClientRequest(method: "GET", url: url))
            if index >= 2 { times.append((ContinuousClock.now - started).seconds * 1000) }
            status = response.status
            bytes = response.body.count
        }
        times.sort()
        let round = { (value: Double) in (value * 100).rounded() / 100 }
        return (status, round(times[times.count / 2]), round(times[min(times.count - 1, Int(Double(times.count) * 0.99))]), bytes)
    }

    private struct Seeded {
        /// Page name → path, in the order they are timed.
        let pages: [(String, String)]
    }

    /// An account with an App Store connection trusting a local PKI, `purchases` mirrored purchases with an invoice,
    /// a payment and three timeline events each, `jobs` scheduled resyncs spread over the next day, `receipts`
    /// notifications recorded over the last day (what the queue page's chart counts), and `deadLetters` dead letters of
    /// several kinds — one a genuinely signed App Store notification, so its page verifies a signature.
    private static func seed(pool: PostgresPool, jobs: Int, deadLetters: Int, purchases: Int,
                             receipts: Int) async throws -> Seeded {
        let pending = try await pool.query("SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM dead_letters)")[0]
            .decode(0, as: Int.self)
        guard pending == 0 else {
            throw UsageError("bench console needs an empty queue and no dead letters, found \(pending): use a throwaway database")
        }
        let pki = try LocalApplePKI.generate()
        let host = "console-bench-\(UUID().uuidString.prefix(8).lowercased()).test"
        let bundle = "com.example.consolebench"
        let (accountID, connectionID) = try await pool.transaction { db -> (Int64, Int64) in
            let accountID: Int64 = try db.query("INSERT INTO accounts (host) VALUES ($1) RETURNING id", [host])[0].decode(0)
            var new = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: bundle, environment: .production)
            new.appAppleID = 42
            new.trustedRootsPEM = pki.root.pem
            return (accountID, try Catalog.addConnection(new, on: db).id)
        }
        try await pool.query("""
            INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state, expires_at,
                                         snapshot, as_of, auto_renew)
            SELECT $1, 'bench-' || g, 'Production', 'pro.monthly', 'active', now() + interval '20 days',
                   jsonb_build_object('bench', g), now(), true
            FROM generate_series(1, $2) g
            """, [connectionID, purchases])
        try await pool.query("""
            WITH i AS (
                INSERT INTO invoices (purchase_id, store, store_transaction_id, store_product_id, amount_minor, currency,
                                      description, period_start, period_end, issued_at)
                SELECT id, 'apple', 'bench-tx-' || id, 'pro.monthly', 999, 'USD', 'renewal pro.monthly', now(),
                       now() + interval '1 month', now()
                FROM store_purchases WHERE connection_id = $1
                RETURNING id, store_transaction_id)
            INSERT INTO payments (invoice_id, store, store_transaction_id, amount_minor, currency, paid_at)
            SELECT id, 'apple', store_transaction_id, 999, 'USD', now() FROM i
            """, [connectionID])
        try await pool.query("""
            INSERT INTO purchase_events (purchase_id, kind, source, reference, store_event, detail)
            SELECT p.id, k.kind, 'notification', gen_random_uuid()::text, 'DID_RENEW', '{"state": "active"}'
            FROM store_purchases p, unnest(ARRAY['state_changed', 'charge_booked', 'refreshed']) AS k(kind)
            WHERE p.connection_id = $1
            """, [connectionID])
        try await pool.query("""
            INSERT INTO jobs (kind, payload, priority, run_at)
            SELECT 'apple.resync', jsonb_build_object('connection_id', $1::bigint, 'lineage', 'bench-' || (g % $3 + 1),
                                                      'reason', 'daily'),
                   -5, now() + interval '1 minute' + g * (interval '1 day' / $2)
            FROM generate_series(1, $2) g
            """, [connectionID, jobs, purchases])
        try await pool.query("""
            INSERT INTO notification_receipts (store, scope, message_id, received_at, processed_at, outcome)
            SELECT 'apple', '', 'bench-' || g, now() - g * (interval '1 day' / $1), now() - g * (interval '1 day' / $1), 'mirrored'
            FROM generate_series(1, $1) g
            """, [receipts])
        let kinds = ["apple.resync", "google.acknowledge", "apple.notification", "google.notification", "apple.consumption"]
        try await pool.query("""
            INSERT INTO dead_letters (id, kind, payload, priority, max_attempts, attempts, errors, reason, job_created_at, dead_at)
            SELECT 10000000 + g, ($3::text[])[g % 5 + 1],
                   jsonb_build_object('connection_id', $1::bigint, 'account_id', $2::bigint, 'lineage', 'bench-' || g),
                   0, 25, 25,
                   jsonb_build_array(jsonb_build_object('attempt', 25, 'at', now(), 'worker', 'bench-worker',
                                                        'error', 'store answered 500')),
                   CASE WHEN g % 3 = 0 THEN 'store answered 500 after 25 attempts' ELSE 'product pro.yearly is not mapped' END,
                   now() - g * interval '1 minute', now() - g * interval '30 second'
            FROM generate_series(1, $4) g
            """, [connectionID, accountID, PostgresArray(kinds), deadLetters])
        // One genuine App Store notification among them, signed by the PKI the connection trusts.
        let transaction = try pki.sign(try JSONSerialization.data(withJSONObject: [
            "transactionId": "bench-tx-1", "originalTransactionId": "bench-1", "bundleId": bundle, "productId": "pro.monthly",
            "environment": "Production", "type": "Auto-Renewable Subscription", "signedDate": 1_764_700_000_000,
        ]))
        let signed = try pki.sign(try JSONSerialization.data(withJSONObject: [
            "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
            "data": ["bundleId": bundle, "appAppleId": 42, "environment": "Production", "signedTransactionInfo": transaction],
        ] as [String: Any]))
        let notificationID: Int64 = 9_999_999
        try await pool.query("""
            INSERT INTO dead_letters (id, kind, payload, raw, priority, max_attempts, attempts, errors, reason, job_created_at)
            VALUES ($1, 'apple.notification', jsonb_build_object('account_id', $2::bigint), $3::bytea, 0, 25, 25,
                    '[{"attempt": 25, "error": "verification: retryable"}]', 'store answered 500 after 25 attempts', now())
            """, [notificationID, accountID, try JSONSerialization.data(withJSONObject: ["signedPayload": signed])])
        try await pool.query("""
            VACUUM ANALYZE jobs, dead_letters, store_purchases, invoices, payments, purchase_events, notification_receipts
            """)
        let middle = purchases / 2 + 1
        let purchaseID: Int64 = try await pool.query("SELECT id FROM store_purchases WHERE connection_id = $1 AND lineage = $2",
                                                     [connectionID, "bench-\(middle)"])[0].decode(0)
        return Seeded(pages: [
            ("queue", "/"),
            ("dead_letters", "/dead-letters"),
            ("dead_letters_filtered", "/dead-letters?kind=apple.resync&account=\(accountID)&reason=not+mapped&age=7d"),
            ("dead_letters_last_page", "/dead-letters?page=\(max(1, deadLetters / Console.deadLettersPerPage))"),
            ("dead_letter_notification", "/dead-letters/\(notificationID)"),
            ("dead_letter_resync", "/dead-letters/10000010"),
            ("purchase_search", "/purchases?q=bench-tx-\(purchaseID)"),
            ("purchase_search_lineage", "/purchases?q=bench-\(middle)"),
            ("purchase_story", "/purchases/\(purchaseID)"),
        ])
    }
}
