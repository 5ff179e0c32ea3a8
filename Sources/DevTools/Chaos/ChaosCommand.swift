import Accounts
import CLI
import Crypto
import Foundation
import HTTP
import Migrations
import Postgres
import Simulator
import StoreModel
import Sync

/// `storesync-dev chaos`: the Swift half of `deploy/bench/chaos.sh` — both store simulators, a scripted load through
/// the real `serve` and workers the script runs (and kills), then the mirror compared with the simulators' truth.
struct ChaosCommand: Command {
    static let name = "chaos"
    static let summary = "drive a chaos run's load and compare the mirror with the simulators (see deploy/bench/chaos.sh)"
    static let usage = """
        usage: storesync-dev chaos --ingest URL [--purchases N] [--duration D] [--fault-rate F] [--seed S]
                               [--progress FILE] [--counters FILE] [--drain-timeout D]

        The load and the verdict of deploy/bench/chaos.sh, which runs `serve` at URL and the workers it kills. On a
        migrated, throwaway DATABASE_URL: starts the App Store and Play simulators in this process (posting to
        URL/webhook/apple and URL/webhook/google-play), adds an account with a connection to each, a plan and one
        customer with an issued account token per purchase; then plays, paced over D (default 60s), N purchases
        (default 100, half per store), two rounds of renewals, cancellations and refunds. Before each action, with
        probability F (default 0.1), it injects the next of: a 429, a 500, a second of 300 ms latency on the store's
        API, the action's notification lost (never a first purchase's: nothing could recover it). It writes
        "load K/T" to FILE as it goes, then "settle". Then: faults off, the queue drained, a resync of every
        purchase of both connections (what `storesync sync` enqueues), drained again, and the comparison. One JSON
        line; exit 1 on any loss, duplicate, mismatch, dead letter or job left over. --counters names the JSON
        file the script writes its kills and restarts to (merged into the line).
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        guard let ingest = try arguments.option("--ingest") else { throw UsageError("--ingest URL is required") }
        guard ingest.hasPrefix("http://") else { throw UsageError("--ingest must be an http:// URL") }
        let base = ingest.hasSuffix("/") ? String(ingest.dropLast()) : ingest
        let purchases = try Parse.int(try arguments.option("--purchases") ?? "100", "--purchases", range: 2...100_000)
        let duration = try Parse.duration(try arguments.option("--duration") ?? "60s", "--duration", range: .zero...(.seconds(86_400)))
        let faultText = try arguments.option("--fault-rate") ?? "0.1"
        guard let faultRate = Double(faultText), (0...1).contains(faultRate) else {
            throw UsageError("--fault-rate is a fraction 0…1, not \(faultText.prefix(20).debugDescription)")
        }
        let seed = UInt64(try Parse.int(try arguments.option("--seed") ?? "1", "--seed", range: 0...Int.max))
        let progressFile = try arguments.option("--progress")
        let countersFile = try arguments.option("--counters")
        let drainTimeout = try Parse.duration(try arguments.option("--drain-timeout") ?? "300s", "--drain-timeout",
                                              range: .seconds(1)...(.seconds(86_400)))
        let resync = try environment.resyncSettings()
        try arguments.finish()

        var postgres = try environment.postgres(defaultSize: 4, applicationName: "storesync-chaos")
        postgres.acquireTimeout = .seconds(30)
        let pool = PostgresPool(postgres)
        try await pool.withConnection { try await Migrator().requireCurrent($0) }

        let host = "chaos-\(UUID().uuidString.lowercased().prefix(8)).invalid"
        let apple = try await ApplePipelineBenchStore.start(webhookURL: base + ApplePipelineBenchStore.webhookPath, host: host)
        let google = try googleStore(webhookURL: base + GooglePipelineBenchStore.webhookPath, host: host)
        let stores = [ChaosStore.apple(apple), .google(google)]
        let started = ContinuousClock.now
        let outcome: Result<(Output.Value, Bool), any Error>
        do {
            outcome = .success(try await drive(stores, apple: apple, google: google, host: host, purchases: purchases,
                                               duration: duration, faultRate: faultRate, seed: seed, progressFile: progressFile,
                                               countersFile: countersFile, drainTimeout: drainTimeout, resync: resync,
                                               pool: pool, started: started))
        } catch {
            outcome = .failure(error)
        }
        await apple.stop()
        await google.stop()
        await pool.close()
        let (report, passed) = try outcome.get()
        Output.print(report.text)
        return passed ? 0 : 1
    }

    /// The Play simulator as `bench pipeline` runs it, but redelivering refused pushes as Pub/Sub does (from 1 s,
    /// doubling to 8 s, 40 attempts: about 5 minutes), and with day-long periods.
    private static func googleStore(webhookURL: String, host: String) throws -> GooglePipelineBenchStore {
        let key = try PrivateKey.generate(.rsa(bits: 2048))
        var app = SimulatedPlayApp(packageName: GooglePipelineBenchStore.packageName)
        app.renewalPeriod = .seconds(86_400)
        var configuration = PlaySimulatorConfiguration(
            apps: [app], serviceAccount: SimulatedServiceAccount(clientEmail: GooglePipelineBenchStore.clientEmail,
                                                                 publicKey: key.publicKey))
        let audience = "https://\(host)\(GooglePipelineBenchStore.webhookPath)"
        let target = PlayPushTarget(url: webhookURL, audience: audience, serviceAccountEmail: GooglePipelineBenchStore.pushAccount,
                                    host: host)
        configuration.push = target
        configuration.pushRetry = PushRetryPolicy(minimumBackoff: .seconds(1), maximumBackoff: .seconds(8), maxAttempts: 40)
        return GooglePipelineBenchStore(play: try PlaySimulator(configuration: configuration), serviceAccountKey: key,
                                        audience: audience, subscription: target.subscription)
    }

    private static func drive(_ stores: [ChaosStore], apple: ApplePipelineBenchStore, google: GooglePipelineBenchStore,
                              host: String, purchases: Int, duration: Duration, faultRate: Double, seed: UInt64,
                              progressFile: String?, countersFile: String?, drainTimeout: Duration, resync: ResyncSettings,
                              pool: PostgresPool, started: ContinuousClock.Instant) async throws -> (Output.Value, Bool) {
        let seeded = try await seedDatabase(pool: pool, host: host, apple: apple, google: google, customers: purchases)
        let counts = [purchases - purchases / 2, purchases / 2]
        // Every store's plan is known up front, so progress is a fraction of all actions.
        let total = counts.enumerated().reduce(0) { sum, item in
            var random = ChaosRandom(seed: seed &+ UInt64(item.offset))
            return sum + ChaosAction.plan(purchases: item.element, random: &random).count
        }
        let progress = ChaosProgress(file: progressFile, total: total)
        progress.write("load 0/\(total)")
        let results = await withTaskGroup(of: (Int, ChaosLoadTally, [String?]).self) { group in
            for (i, store) in stores.enumerated() {
                let tokens = Array(seeded.tokens[(i == 0 ? 0 : counts[0])...].prefix(counts[i]))
                let load = ChaosLoad(store: store, purchases: counts[i], duration: duration, faultRate: faultRate,
                                     seed: seed &+ UInt64(i), tokens: tokens, progress: { progress.advance($0) })
                group.addTask {
                    let (tally, lineages) = await load.run()
                    return (i, tally, lineages)
                }
            }
            var results: [(Int, ChaosLoadTally, [String?])] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }
        }
        for store in stores { try store.clearFaults() }
        progress.write("settle")
        var tally = ChaosLoadTally()
        for result in results { tally.merge(result.1) }

        let deadline = ContinuousClock.now + drainTimeout
        var drained = try await drain(pool: pool, google: google, until: deadline)
        for connection in [seeded.appleConnection, seeded.googleConnection] {
            try await pool.transaction { db in
                guard let connection = try StoreConnections.get(id: connection, on: db) else {
                    throw SetupError(.notFound, "no connection \(connection)")
                }
                _ = try ResyncPlanner.enqueue(connection: connection, lineage: nil, batch: "chaos-\(UUID().uuidString)",
                                              reason: "manual", settings: resync, priority: -5, on: db)
            }
        }
        drained = try await drain(pool: pool, google: google, until: deadline) && drained

        let appleLineages = results[0].2.compactMap { $0 }
        let googleLineages = results[1].2.compactMap { $0 }
        var comparison = try await ChaosComparison.compare(ChaosTruth.apple(apple.simulator, lineages: appleLineages), store: "apple",
                                                           connectionID: seeded.appleConnection, pool: pool)
        comparison.merge(try await ChaosComparison.compare(ChaosTruth.google(google.play, lineages: googleLineages, now: Date()),
                                                           store: "google", connectionID: seeded.googleConnection, pool: pool))
        let deadLetters: Int = try await pool.query("SELECT count(*)::int FROM dead_letters")[0].decode(0)
        let pending: Int = try await pool.query("SELECT count(*)::int FROM jobs")[0].decode(0)
        let deadLetterReasons = try await pool.query("""
            SELECT kind || ': ' || left(reason, 160) FROM dead_letters ORDER BY id LIMIT 5
            """).map { try $0.decode(0, as: String.self) }
        let counters = await readCounters(countersFile)
        let drift: Int = try await pool.query("""
            SELECT count(*)::int FROM purchase_events WHERE kind = 'drift'
            """)[0].decode(0)

        for example in comparison.examples { FileHandle.standardError.write(Data("chaos: \(example)\n".utf8)) }
        for reason in deadLetterReasons { FileHandle.standardError.write(Data("chaos: dead letter \(reason)\n".utf8)) }
        for error in tally.scenarioErrors.prefix(10) { FileHandle.standardError.write(Data("chaos: \(error)\n".utf8)) }

        let passed = comparison.lost == 0 && comparison.duplicates == 0 && comparison.stateMismatches == 0
            && comparison.amountMismatches == 0 && comparison.unexpected == 0 && deadLetters == 0 && pending == 0
            && tally.scenarioErrors.isEmpty && drained
        var fields: [(String, Output.Value)] = [
            ("purchases", .int(appleLineages.count + googleLineages.count)),
            ("notifications", .int(tally.notifications)),
        ]
        for name in ["kills", "restarts"] { fields.append((name, .int(counters[name] ?? 0))) }
        fields += [
            ("expected_charges", .int(comparison.expectedCharges)), ("booked_charges", .int(comparison.bookedCharges)),
            ("expected_refunds", .int(comparison.expectedRefunds)), ("booked_refunds", .int(comparison.bookedRefunds)),
            ("duplicates", .int(comparison.duplicates)), ("state_mismatches", .int(comparison.stateMismatches)),
            ("dead_letters", .int(deadLetters)), ("lost", .int(comparison.lost)),
            ("lost_purchases", .int(comparison.lostPurchases)), ("lost_charges", .int(comparison.lostCharges)),
            ("lost_refunds", .int(comparison.lostRefunds)), ("amount_mismatches", .int(comparison.amountMismatches)),
            ("unexpected", .int(comparison.unexpected)), ("jobs_left", .int(pending)), ("drained", .bool(drained)),
            ("apple_purchases", .int(appleLineages.count)), ("google_purchases", .int(googleLineages.count)),
            ("actions", .int(tally.actions)), ("fault_rate", .double(faultRate)),
            ("faults", .object([("rate_limited", .int(tally.rateLimited)), ("failed", .int(tally.failed)),
                                ("latency", .int(tally.latency)), ("lost_notifications", .int(tally.dropped))])),
            ("redelivered", .int(tally.redelivered)), ("undelivered", .int(tally.undelivered)),
            ("drift_events", .int(drift)), ("scenario_errors", .int(tally.scenarioErrors.count)),
        ]
        for (name, value) in counters.sorted(by: { $0.key < $1.key }) where !["kills", "restarts"].contains(name) {
            fields.append((name, .int(value)))
        }
        fields += [("seconds", .double(((ContinuousClock.now - started).seconds * 10).rounded() / 10)), ("ok", .bool(passed))]
        return (.object(fields), passed)
    }

    struct Seeded {
        let appleConnection: Int64
        let googleConnection: Int64
        let tokens: [UUID]
    }

    /// One account with a connection to each simulator, the product mapped on both, one customer with an issued
    /// account token per purchase (so every purchase links).
    private static func seedDatabase(pool: PostgresPool, host: String, apple: ApplePipelineBenchStore, google: GooglePipelineBenchStore,
                             customers: Int) async throws -> Seeded {
        let appleRequest = try apple.connection(accountID: 0)
        let googleRequest = try google.connection(accountID: 0)
        let (accountID, appleID, googleID) = try await pool.transaction { db -> (Int64, Int64, Int64) in
            let accountID: Int64 = try db.query("INSERT INTO accounts (host) VALUES ($1) RETURNING id", [host])[0].decode(0)
            let price = try Catalog.addPlanPrice(accountID: accountID, planCode: "pro", priceCode: "monthly",
                                                 amount: Money(minorUnits: 999, currency: "USD"), entitlements: ["pro"], on: db)
            var ids: [Int64] = []
            for (request, basePlan) in [(appleRequest, nil), (googleRequest, GooglePipelineBenchStore.basePlan)] {
                var request = request
                request.accountID = accountID
                let connection = try Catalog.addConnection(request, on: db)
                try Catalog.mapProduct(connectionID: connection.id, productID: PipelineBenchmark.productID, basePlanID: basePlan,
                                       planPriceID: price, on: db)
                ids.append(connection.id)
            }
            return (accountID, ids[0], ids[1])
        }
        let tokens = try await PipelineBenchmark.issueTokens(accountID: accountID, count: customers, pool: pool)
        return Seeded(appleConnection: appleID, googleConnection: googleID, tokens: tokens)
    }

    /// Waits until no job is queued or running and the Play simulator has no push still being redelivered; false
    /// at the deadline. A failed poll (PostgreSQL restarting) is tried again.
    private static func drain(pool: PostgresPool, google: GooglePipelineBenchStore, until deadline: ContinuousClock.Instant)
        async throws -> Bool
    {
        var quiet = 0
        while ContinuousClock.now < deadline {
            let jobs = try? await pool.query("SELECT count(*)::int FROM jobs")[0].decode(0, as: Int.self)
            // A lost push has one attempt, `dropped`, and is never redelivered.
            let pushing = google.play.pushes.contains { push in
                !push.acknowledged && !push.abandoned && !push.attempts.isEmpty
                    && push.attempts.last?.delivery.outcome != .dropped
            }
            // Twice in a row, a second apart: a job's completion may enqueue a follow-up (an acknowledgement, a
            // refund check) in the same commit, so an empty queue seen once is enough, but pushes answer late.
            quiet = jobs == 0 && !pushing ? quiet + 1 : 0
            if quiet >= 2 { return true }
            try await Task.sleep(for: .milliseconds(500))
        }
        return false
    }

    private static func readCounters(_ file: String?) async -> [String: Int] {
        guard let file else { return [:] }
        for _ in 0..<60 {
            if let data = FileManager.default.contents(atPath: file),
               let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
                return object.compactMapValues { ($0 as? NSNumber)?.intValue }
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        FileHandle.standardError.write(Data("chaos: no counters in \(file) after 30 s\n".utf8))
        return [:]
    }
}

/// "load K/T" in a file the script reads, rewritten (atomically) as actions start.
final class ChaosProgress: Sendable {
    private let file: String?
    private let total: Int
    private let done = Locked(0)

    init(file: String?, total: Int) {
        self.file = file
        self.total = total
    }

    func advance(_ count: Int) {
        let now = done.withLock { value -> Int in
            value += count
            return value
        }
        if now % 10 == 0 || now == total { write("load \(now)/\(total)") }
    }

    func write(_ text: String) {
        guard let file else { return }
        try? Data((text + "\n").utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
    }
}
