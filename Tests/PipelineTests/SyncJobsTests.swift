import Accounts
import Foundation
import GooglePlay
import HTTP
import IngestJobs
import Mirror
import Postgres
import Queue
import StoreModel
@testable import Sync
import TestSupport
import Testing
import Worker

/// Sync's job contracts: one key style in every payload, what the previous release queued still runs, and
/// what the resync fan-out's SQL writes is read by the args its handlers declare.
@Suite struct SyncJobsTests {
    /// One sample of every job Sync or ingest writes, as it is written.
    static let samples: [(kind: JobKind, payload: @Sendable () throws -> String)] = [
        (ResyncArgs<AppleJobs>.kind, { try JobPayload.encode(ResyncArgs<AppleJobs>(connectionID: 1, lineage: "l", reason: "daily")) }),
        (ResyncArgs<GoogleJobs>.kind, {
            try JobPayload.encode(GoogleSweepHandler.resyncArgs(VoidedOrder(orderID: "GPA.1", voidedAt: Date(), refundType: 1,
                                                                            voidedQuantity: 1, reason: "CHARGEBACK"),
                                                                connectionID: 1, lineage: "l"))
        }),
        (SweepArgs<AppleJobs>.kind, { try AppleJobs.sweepJob(connectionID: 1, uniqueKey: "k").payload }),
        (SweepArgs<GoogleJobs>.kind, { try GoogleJobs.sweepJob(connectionID: 1, uniqueKey: "k").payload }),
        (AppleConsumptionArgs.kind, {
            try JobPayload.encode(AppleConsumptionArgs(connectionID: 1, transactionID: "2", deadlineMilliseconds: 3,
                                                       notificationUUID: "u", productType: "Consumable"))
        }),
        (GoogleAcknowledgementArgs.kind, {
            try JobPayload.encode(GoogleAcknowledgementArgs(connectionID: 1, purchaseID: 2, productID: "p", token: "t",
                                                            lineage: "l"))
        }),
        (PeriodArgs<DailySyncJob>.kind, { try JobPayload.encode(PeriodArgs<DailySyncJob>(schedule: "daily-sync", period: "2026-11-29")) }),
        (PeriodArgs<ReconcileJob>.kind, { try JobPayload.encode(PeriodArgs<ReconcileJob>(schedule: "reconcile", period: "2026-11-29")) }),
        (AppleNotificationArgs.kind, { try JobPayload.encode(AppleNotificationArgs(accountID: 1, source: "history")) }),
        (OutageSweepArgs.kind, { try JobPayload.encode(OutageSweepArgs(hosts: ["billing.test"], from: Date(), to: Date())) }),
    ]

    @Test(arguments: samples.indices)
    func everyPayloadIsWrittenWithSnakeCaseKeysOnly(sample: Int) throws {
        let (kind, payload) = Self.samples[sample]
        func keys(_ value: Any) -> [String] {
            if let object = value as? [String: Any] { return object.keys + object.values.flatMap(keys) }
            if let array = value as? [Any] { return array.flatMap(keys) }
            return []
        }
        let all = keys(try JSONSerialization.jsonObject(with: Data(try payload().utf8)))
        #expect(!all.isEmpty)
        #expect(all.filter { !$0.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" } } == [], "\(kind)")
    }

    @Test func eachKindIsRegisteredOnceUnderItsArgs() throws {
        var handlers = JobHandlers()
        SyncHandlers.register(into: &handlers, http: try HTTPClient())
        #expect(handlers.kinds == ["apple.consumption", "apple.notification", "apple.resync", "apple.sweep", "google.acknowledge",
                                   "google.notification", "google.resync", "google.sweep", "sync.daily", "sync.outage",
                                   "sync.reconcile"])
    }

    /// As the previous release's `JSONEncoder` wrote them: a rolling upgrade leaves such jobs queued, and old
    /// workers still enqueue them while new ones run.
    @Test func thePreviousReleasesCamelCasePayloadsStillRun() throws {
        let acknowledgement = try JobPayload.decode(GoogleAcknowledgementArgs.self, from: """
            {"connectionID":3,"purchaseID":9,"productID":"pro.yearly","token":"tok-1"}
            """)
        #expect(acknowledgement.connectionID == 3 && acknowledgement.purchaseID == 9)
        #expect(acknowledgement.productID == "pro.yearly" && acknowledgement.token == "tok-1")
        let consumption = try JobPayload.decode(AppleConsumptionArgs.self, from: """
            {"connectionID":1,"transactionID":"2000000123","deadlineMilliseconds":1795960800000,\
            "notificationUUID":"5b0c1f2e-notification","productType":"Auto-Renewable Subscription"}
            """)
        #expect(consumption.connectionID == 1 && consumption.transactionID == "2000000123")
        #expect(consumption.deadline == Date(timeIntervalSince1970: 1_795_960_800))
        #expect(consumption.notificationUUID == "5b0c1f2e-notification")
        #expect(consumption.productType == "Auto-Renewable Subscription")
    }

    /// The fan-out's payloads come out of SQL (`ResyncPlanner` reads the lineages, `JobQueue.fanOut` inserts):
    /// read back, they decode as the args the resync handlers declare.
    @Test(arguments: [Store.apple, .google])
    func theResyncFanOutWritesWhatTheResyncHandlersRead(store: Store) async throws {
        try await TestDatabase.with { database in
            let connection = try await database.pool.transaction { db in
                let account: Int64 = try db.query("INSERT INTO accounts (host) VALUES ('billing.test') RETURNING id")[0].decode(0)
                return try Catalog.addConnection(Catalog.NewConnection(accountID: account, store: store, appIdentifier: "com.example",
                                                                       environment: .production), on: db)
            }
            let lineages = ["lineage-1", "lineage-2"]
            for lineage in lineages {
                try await database.pool.query("""
                    INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state,
                                                 expires_at, snapshot, as_of)
                    VALUES ($1, $2, 'Production', 'pro.monthly', 'active', now() + interval '20 days', '{}', now())
                    """, [connection.id, lineage])
            }
            let added = try await database.pool.transaction { db in
                try ResyncPlanner.enqueue(connection: connection, batch: "daily", reason: "daily", settings: ResyncSettings(), on: db)
            }
            #expect(added == 2)
            let jobs = try await database.pool.query("SELECT kind, payload::text FROM jobs ORDER BY run_at")
            #expect(try jobs.map { try $0.decode(0, as: String.self) } == lineages.map { _ in store.jobs.resync.name })
            let read = try jobs.map { try Self.resync(store.jobs, payload: try $0.decode(1, as: String.self)) }
            #expect(read.map(\.connectionID) == [connection.id, connection.id])
            #expect(read.map(\.lineage) == lineages)
            #expect(read.map(\.reason) == ["daily", "daily"])
        }
    }

    /// Read and queued a page at a time, the lineages still make one spread: every one once, in purchase order,
    /// each due one spacing after the one before across the pages' seams.
    @Test func aFanOutOverSeveralPagesIsOneSpread() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let lineages = (1...5).map { "lineage-\($0)" }
            for lineage in lineages {
                try await database.pool.query("""
                    INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state,
                                                 expires_at, snapshot, as_of)
                    VALUES ($1, $2, 'Production', 'pro.monthly', 'active', now() + interval '20 days', '{}', now())
                    """, [fixture.connection.id, lineage])
            }
            var paged = ResyncSettings()
            paged.fanOutPage = 2
            let settings = paged
            let connection = fixture.connection
            let added = try await database.pool.transaction { db in
                try ResyncPlanner.enqueue(connection: connection, batch: "daily", reason: "daily", settings: settings, on: db)
            }
            #expect(added == 5)
            let jobs = try await database.pool.query("""
                SELECT payload->>'lineage', extract(epoch FROM run_at - min(run_at) OVER ())::float8 FROM jobs ORDER BY run_at
                """)
            #expect(try jobs.map { try $0.decode(0, as: String.self) } == lineages)
            let spacing = 1 / ResyncPlanner.rate(for: connection, share: settings.rateShare)
            let offsets = try jobs.map { try $0.decode(1, as: Double.self) }
            #expect(zip(offsets, (0..<5).map { Double($0) * spacing }).allSatisfy { abs($0 - $1) < 0.000_01 }, "\(offsets)")
        }
    }

    private static func resync<Kinds: StoreJobs>(_ kinds: Kinds.Type, payload: String) throws
        -> (connectionID: Int64, lineage: String, reason: String?)
    {
        let args = try JobPayload.decode(ResyncArgs<Kinds>.self, from: payload)
        return (args.connectionID, args.lineage, args.reason)
    }
}
