import AppStore
import CLI
import Crypto
import Foundation
import HTTP
import Migrations
import Postgres
import Simulator
import StoreModel
import Sync
import Worker

/// `storesync-dev bench resync`: the daily resync's throughput with the rate budget lifted — N live purchases
/// seeded in the local simulators and the database, the fan-out enqueued as the schedule would, and the
/// time until every lineage was re-fetched and applied — and what that means for a million purchases at
/// the default budget.
enum ResyncBenchmark {
    static let projectedPurchases = 1_000_000.0

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        guard let text = try arguments.option("--purchases") else { throw UsageError("--purchases N is required") }
        let purchases = try Parse.int(text, "--purchases", range: 1...1_000_000)
        let slots = try Parse.int(try arguments.option("--concurrency") ?? "128", "--concurrency", range: 1...4096)
        let stores = try arguments.option("--store") ?? "both"
        guard ["apple", "google", "both"].contains(stores) else { throw UsageError("--store must be apple, google or both") }
        try arguments.finish()

        var postgres = try environment.postgres(defaultSize: 8, applicationName: "storesync-bench")
        postgres.acquireTimeout = .seconds(30)
        let pool = PostgresPool(postgres)
        try await pool.withConnection { try await Migrator().requireCurrent($0) }
        var fields: [(String, Output.Value)] = [("benchmark", .string("resync")), ("purchases", .int(purchases))]
        for store in stores == "both" ? [Store.apple, .google] : [Store(rawValue: stores)!] {
            let rate = try await measure(store, purchases: purchases, slots: slots, pool: pool, url: postgres.url)
            let budget = ResyncPlanner.rate(store: store, environment: .production, share: ResyncSettings().rateShare)
            let projected = projectedPurchases / min(rate, budget)
            fields += [
                ("\(store.rawValue)_purchases_per_sec", .double(rate.rounded())),
                ("\(store.rawValue)_default_budget_per_sec", .double(budget)),
                ("\(store.rawValue)_projected_hours_for_1m", .double((projected / 36).rounded() / 100)),
            ]
        }
        await pool.close()
        Output.print(Output.Value.object(fields).text)
        return 0
    }

    /// Seeds, fans out and drains one store's resync; returns lineages re-fetched and applied per second.
    private static func measure(_ store: Store, purchases: Int, slots: Int, pool: PostgresPool, url: String) async throws -> Double {
        var clientConfiguration = HTTPClientConfiguration()
        clientConfiguration.timeout = .seconds(60)
        let http = try HTTPClient(configuration: clientConfiguration)
        let seeded = try await BenchStores.seed(store, purchases: purchases, pool: pool)

        var handlers = JobHandlers()
        var sync = SyncHandlers.Configuration()
        sync.rateLimitShare = 1000
        sync.resync.rateShare = 1000
        SyncHandlers.register(into: &handlers, http: http, configuration: sync)
        var configuration = WorkerConfiguration()
        configuration.concurrency = slots
        configuration.pollInterval = .milliseconds(50)
        let worker = Worker(configuration: configuration, handlers: handlers, pool: pool, listenURL: url)
        let running = Task { await worker.run() }

        let clock = ContinuousClock()
        let started = clock.now
        let connection = seeded.connection
        let settings = sync.resync
        let added = try await pool.transaction { db in
            try ResyncPlanner.enqueue(connection: connection, batch: "bench-\(UUID().uuidString)", reason: "bench",
                                      settings: settings, on: db)
        }
        guard added == purchases else { throw BenchError("planned \(added) resyncs for \(purchases) purchases") }
        let kind = ResyncPlanner.jobKind(for: store)
        while try await pool.query("SELECT count(*) FROM jobs WHERE kind = $1", [kind])[0].decode(0, as: Int.self) > 0 {
            try await Task.sleep(for: .milliseconds(50))
        }
        let elapsed = (clock.now - started).seconds
        worker.stop()
        await running.value
        let failed: Int = try await pool.query("SELECT count(*) FROM dead_letters WHERE kind = $1", [kind])[0].decode(0)
        await seeded.stop()
        await http.shutdown()
        guard failed == 0 else { throw BenchError("\(failed) \(kind) jobs were dead-lettered; see storesync dead-letters") }
        return Double(purchases) / elapsed
    }
}

/// A benchmark that could not produce a meaningful figure.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
