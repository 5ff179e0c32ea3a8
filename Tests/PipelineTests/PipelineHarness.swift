import Accounts
import AppStore
import Crypto
import Foundation
import GooglePlay
import HTTP
import Ingest
import Logging
import Metrics
import Mirror
import Operations
import Postgres
import Queue
import Simulator
import StoreModel
import Sync
import TestPKI
import TestSupport
import Testing
import Worker

/// The whole Apple path on loopback: the simulated App Store posts signed notifications to a real ingest
/// endpoint, a real worker (the production handlers) re-fetches from the simulator, and the mirror lands in a
/// database of the test's own. Retries are fast (100 ms base) so fault tests finish quickly.
struct Pipeline {
    static let host = "billing.test"
    static let bundleID = "com.example.pipeline"
    static let appAppleID: Int64 = 1_234_567_890
    /// Store product → plan price code, each mapped on the connection.
    static let products = ["pro.monthly": Money(minorUnits: 999, currency: "USD"),
                           "pro.yearly": Money(minorUnits: 9_999, currency: "USD")]

    struct Options {
        var environment: StoreEnvironment = .production
        var requireIssuedTokens = true
        var answerConsumptionRequests = false
        var mappedProducts = Array(Pipeline.products.keys)
        var startWorker = true
        /// An extra simulated App Store for the same bundle in the other environment, signing with the same PKI.
        var otherEnvironmentSimulator = false
        /// Whether the Apple connection records its App Apple ID (required for Production only).
        var connectionKnowsAppAppleID = true
        /// A simulated Play Store too, with a Google connection of this environment for `packageName`.
        var googleEnvironment: StoreEnvironment?
        /// Pages of Apple history one job reads before a follow-up resync reads on.
        var appleHistoryPages = AppStoreAPIConfiguration.defaultMaxHistoryPages
        /// The simulated App Store's paid period; shorter ones let a long history fit in the test PKI's validity.
        var appleRenewalPeriod = Duration.seconds(30 * 86_400)
        /// Ingest and the worker log in as members of `storesync_ingest` and `storesync_worker`, with exactly the
        /// grants production gives them, instead of as the schema owner.
        var leastPrivilege = false
    }

    static let packageName = "com.example.pipeline"
    static let pushAudience = "https://billing.test/webhook/google-play"
    static let pushAccount = "push@storesync-simulator.iam.gserviceaccount.com"
    /// Google products as (product, base plan), mapped like the Apple ones.
    static let googlePlans = ["pro.monthly": "monthly", "pro.yearly": "yearly"]

    let database: TestDatabase
    let simulator: AppStoreSimulator
    let otherSimulator: AppStoreSimulator?
    let play: PlaySimulator?
    let googleConnection: StoreConnection?
    let accountID: Int64
    let connection: StoreConnection
    let planPrices: [String: Int64]
    /// Apple's webhook on the test's ingest.
    let ingestURL: String?
    /// The PKI the simulators sign with, which the Apple connection trusts.
    let pki: LocalApplePKI
    /// The ingest's and the worker's metrics, as `/metrics` would show them.
    let metrics: MetricsRegistry
    private let worker: Worker?

    static func with(_ options: Options = Options(), _ body: (Pipeline) async throws -> Void) async throws {
        try await TestDatabase.with(poolSize: 8) { database in
            let key = try PrivateKey.generate(.ecP256)
            let pki = try LocalApplePKI.generate()
            let metrics = MetricsRegistry()
            let roles = options.leastPrivilege
                ? (ingest: try await TestRole.create(memberOf: "storesync_ingest", for: database),
                   worker: try await TestRole.create(memberOf: "storesync_worker", for: database)) : nil
            func pool(_ role: TestRole?, size: Int) -> PostgresPool {
                role.map { PostgresPool(PostgresConfiguration(url: $0.url, poolSize: size, acquireTimeout: .seconds(20),
                                                               applicationName: "storesync-tests")) } ?? database.pool
            }
            let ingestPool = pool(roles?.ingest, size: 4)
            let workerPool = pool(roles?.worker, size: 8)
            let ingestHTTP = try HTTPClient()
            let ingest = IngestService(pool: ingestPool, metrics: metrics, keyCaches: GoogleKeyCaches(http: ingestHTTP))
            var router = HTTPRouter()
            ingest.install(into: &router)
            let commits = Task { await ingest.run(flushers: 1) }
            let ingestServer = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
            let target = NotificationTarget(url: "http://127.0.0.1:\(ingestServer.port)/webhook/apple", host: host)

            func makeSimulator(_ environment: StoreEnvironment) throws -> AppStoreSimulator {
                let apiKey = SimulatedAPIKey(keyID: "KEY123", issuerID: "issuer-1", publicKey: key.publicKey)
                var app = SimulatedApp(bundleID: bundleID, appAppleID: appAppleID,
                                       environment: AppStoreEnvironment(rawValue: environment.rawValue), apiKey: apiKey)
                app.renewalPeriod = options.appleRenewalPeriod
                var configuration = SimulatorConfiguration(apps: [app])
                configuration.notificationTarget = target
                configuration.pki = pki
                return try AppStoreSimulator(configuration: configuration)
            }
            let simulator = try makeSimulator(options.environment)
            let other = options.otherEnvironmentSimulator
                ? try makeSimulator(options.environment == .production ? StoreEnvironment.sandbox : .production) : nil

            var playSimulator: PlaySimulator?
            let serviceAccountKey = try PrivateKey.generate(.rsa(bits: 2048))
            if options.googleEnvironment != nil {
                // Hour-long periods: each renewal moves the simulated clock to the period's end, and Google's
                // 30-day voided-purchases window is checked against that clock.
                var app = SimulatedPlayApp(packageName: packageName)
                app.renewalPeriod = .seconds(3600)
                var configuration = PlaySimulatorConfiguration(
                    apps: [app],
                    serviceAccount: SimulatedServiceAccount(clientEmail: "storesync@storesync-simulator.iam.gserviceaccount.com",
                                                            publicKey: serviceAccountKey.publicKey))
                configuration.push = PlayPushTarget(url: "http://127.0.0.1:\(ingestServer.port)/webhook/google-play",
                                                    audience: pushAudience, serviceAccountEmail: pushAccount, host: host)
                // Ten minutes in the past, so what happens first has happened before a sweep's window ends.
                configuration.clockStart = Date().addingTimeInterval(-600)
                configuration.pushRetry = PushRetryPolicy(minimumBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200),
                                                          maxAttempts: 3)
                playSimulator = try PlaySimulator(configuration: configuration)
            }
            let play = playSimulator

            let (accountID, connection, planPrices, googleConnection) = try await database.pool.transaction { db in
                let accountID: Int64 = try db.query("INSERT INTO accounts (host) VALUES ($1) RETURNING id", [host])[0].decode(0)
                var new = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: bundleID,
                                                environment: options.environment)
                new.appAppleID = options.connectionKnowsAppAppleID ? appAppleID : nil
                new.requireIssuedTokens = options.requireIssuedTokens
                new.answerConsumptionRequests = options.answerConsumptionRequests
                new.apiKeyID = "KEY123"
                new.apiIssuerID = "issuer-1"
                new.apiPrivateKeyPEM = try key.pem()
                new.apiBaseURL = simulator.baseURL
                new.trustedRootsPEM = pki.root.pem
                let connection = try Catalog.addConnection(new, on: db)
                var prices: [String: Int64] = [:]
                for (product, amount) in products {
                    let id = try Catalog.addPlanPrice(accountID: accountID, planCode: "pro", priceCode: product, amount: amount,
                                                      entitlements: ["pro"], on: db)
                    prices[product] = id
                    if options.mappedProducts.contains(product) {
                        try Catalog.mapProduct(connectionID: connection.id, productID: product, planPriceID: id, on: db)
                    }
                }
                var googleConnection: StoreConnection?
                if let environment = options.googleEnvironment, let play {
                    var google = Catalog.NewConnection(accountID: accountID, store: .google, appIdentifier: packageName,
                                                       environment: environment)
                    google.requireIssuedTokens = options.requireIssuedTokens
                    google.apiClientEmail = "storesync@storesync-simulator.iam.gserviceaccount.com"
                    google.apiPrivateKeyPEM = try serviceAccountKey.pem()
                    google.apiTokenURI = play.tokenURI
                    google.apiBaseURL = play.baseURL
                    google.pushAudience = pushAudience
                    google.pushServiceAccount = pushAccount
                    google.pushJWKSURL = play.certificatesURL
                    let added = try Catalog.addConnection(google, on: db)
                    for (product, basePlan) in googlePlans where options.mappedProducts.contains(product) {
                        try Catalog.mapProduct(connectionID: added.id, productID: product, basePlanID: basePlan,
                                               planPriceID: prices[product]!, on: db)
                    }
                    googleConnection = added
                }
                return (accountID, connection, prices, googleConnection)
            }

            let http = try HTTPClient()
            var worker: Worker?
            if options.startWorker {
                var handlers = JobHandlers()
                var sync = SyncHandlers.Configuration()
                sync.appleHistoryPages = options.appleHistoryPages
                SyncHandlers.register(into: &handlers, http: http, configuration: sync, metrics: metrics)
                var configuration = WorkerConfiguration()
                configuration.concurrency = 16
                configuration.pollInterval = .milliseconds(200)
                configuration.retryPolicy.base = .milliseconds(100)
                configuration.retryPolicy.cap = .milliseconds(400)
                configuration.retryPolicy.hintRange = .milliseconds(100)...(.seconds(5))
                worker = Worker(configuration: configuration, handlers: handlers, pool: workerPool,
                                listenURL: roles?.worker.url ?? database.url, observer: WorkerMetrics(registry: metrics))
            }
            let running = worker.map { worker in Task { await worker.run() } }
            let pipeline = Pipeline(database: database, simulator: simulator, otherSimulator: other, play: play,
                                    googleConnection: googleConnection, accountID: accountID,
                                    connection: connection, planPrices: planPrices, ingestURL: target.url, pki: pki,
                                    metrics: metrics, worker: worker)
            func shutDown() async {
                worker?.stop()
                await running?.value
                await ingestServer.stop(grace: .seconds(1))
                await ingest.close()
                await commits.value
                await simulator.stop()
                await other?.stop()
                await play?.stop()
                await http.shutdown()
                await ingestHTTP.shutdown()
                if let roles {
                    await ingestPool.close()
                    await workerPool.close()
                    await roles.ingest.drop()
                    await roles.worker.drop()
                }
            }
            do {
                try await body(pipeline)
            } catch {
                await shutDown()
                throw error
            }
            await shutDown()
        }
    }

    /// A customer with an issued account token (the token is what the app sets as `appAccountToken`).
    func customer() async throws -> (id: String, token: UUID) {
        try await database.pool.transaction { db in
            let id = try Catalog.addCustomer(accountID: accountID, on: db)
            let issued = try AccountTokens.issue(customerID: id, sha256: { Digest.sha256($0) }, on: db)
            return (id, UUID(uuidString: issued.token)!)
        }
    }

    /// Posts a notification signed by `signer` (by default the PKI the connection trusts) to the Apple
    /// webhook, as the App Store would; returns the HTTP status.
    /// A webhook body carrying `claims` signed by `signer` (the simulator's PKI unless given).
    func appleBody(_ claims: [String: Any], signer: LocalApplePKI? = nil) throws -> Data {
        let jws = try (signer ?? pki).sign(try JSONSerialization.data(withJSONObject: claims))
        return try JSONSerialization.data(withJSONObject: ["signedPayload": jws])
    }

    func postAppleNotification(_ claims: [String: Any], signer: LocalApplePKI? = nil) async throws -> Int {
        let ingestURL = try #require(ingestURL)
        let request = HTTPClientRequest(method: "POST", url: ingestURL,
                                        headers: [("Host", Pipeline.host), ("Content-Type", "application/json")],
                                        body: try appleBody(claims, signer: signer))
        let client = try HTTPClient()
        do {
            let status = try await client.send(request).status
            await client.shutdown()
            return status
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// Stores `body` as a job exactly as ingest stores a webhook it accepted, but without ingest's verification
    /// at receipt — as when a store's key or a connection's root changed between receipt and processing: how
    /// tests reach the worker's own verification, which must hold by itself.
    func storeSkippingReceiptChecks(_ body: Data, kind: String, authorization: String? = nil) async throws {
        let headers = authorization.map { #"{"authorization":\#(JSON.quoted($0))}"# }
        let stored = try await database.pool.query("""
            SELECT job_id FROM storesync_ingest(ARRAY[$1], ARRAY[$2], ARRAY[$3::bytea], ARRAY[$4::jsonb], ARRAY[now()])
            """, [Pipeline.host, kind, body, headers])
        #expect(try stored.first?.decodeOptional(0, as: Int64.self) != nil)
    }

    /// Waits until no job is pending or running any more (the ones due later count too), with a bound.
    func settle(timeout: Duration = .seconds(30)) async throws {
        do {
            try await eventually("jobs still pending", timeout: timeout) { try await count("SELECT count(*) FROM jobs") == 0 }
        } catch is TimedOut {
            throw PipelineTimeout(description: "jobs still pending after \(timeout): \(try await jobSummary())")
        }
    }

    func count(_ sql: String, _ parameters: [any PostgresEncodable] = []) async throws -> Int {
        try await database.pool.query(sql, parameters)[0].decode(0)
    }

    /// Job attempts that failed and were retried so far, of every kind (from the worker's metrics).
    func retriedJobs() -> Int {
        metrics.render().split(separator: "\n")
            .filter { $0.hasPrefix("storesync_jobs_retried_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            .reduce(0, +)
    }

    func jobSummary() async throws -> String {
        try await database.pool.query("""
            SELECT coalesce(string_agg(kind || ' attempt ' || attempt || ': ' || coalesce(last_error, '-'), '; '), 'none')
            FROM jobs
            """)[0].decode(0)
    }

    func deadLetterReasons(kind: String? = nil) async throws -> [String] {
        try await database.pool.query("SELECT reason FROM dead_letters WHERE $1::text IS NULL OR kind = $1 ORDER BY id",
                                      [kind]).map { try $0.decode(0) }
    }

    /// The subscription mirroring a lineage: (status, store state, plan price, auto renew), or nil.
    func subscription(_ lineage: String) async throws -> (status: String, state: String, planPriceID: Int64, autoRenew: Bool)? {
        try await database.pool.query("""
            SELECT s.status, s.store_state, s.plan_price_id, s.auto_renew FROM customer_subscriptions s
            JOIN store_purchases p ON p.id = s.purchase_id WHERE p.lineage = $1
            """, [lineage]).first.map { (try $0.decode(0), try $0.decode(1), try $0.decode(2), try $0.decode(3)) }
    }

    func purchase(_ lineage: String) async throws -> (state: String, customerID: String?)? {
        try await database.pool.query("SELECT store_state, customer_id::text FROM store_purchases WHERE lineage = $1",
                                      [lineage]).first.map { (try $0.decode(0), try $0.decodeOptional(1)) }
    }

    func invoices(_ lineage: String) async throws -> [(transactionID: String, amount: Int64, customerID: String?)] {
        try await database.pool.query("""
            SELECT i.store_transaction_id, i.amount_minor, i.customer_id::text FROM invoices i
            JOIN store_purchases p ON p.id = i.purchase_id WHERE p.lineage = $1 ORDER BY i.issued_at, i.id
            """, [lineage]).map { (try $0.decode(0), try $0.decode(1), try $0.decodeOptional(2)) }
    }

    func refunds(_ lineage: String) async throws -> [(transactionID: String, amount: Int64, reversed: Bool)] {
        try await database.pool.query("""
            SELECT r.refunded_transaction_id, r.amount_minor, r.reversed_at IS NOT NULL FROM refunds r
            JOIN invoices i ON i.id = r.invoice_id JOIN store_purchases p ON p.id = i.purchase_id
            WHERE p.lineage = $1 ORDER BY r.id
            """, [lineage]).map { (try $0.decode(0), try $0.decode(1), try $0.decode(2)) }
    }

    func receiptOutcome(_ notificationUUID: String) async throws -> String? {
        try await database.pool.query("SELECT outcome FROM notification_receipts WHERE message_id = $1",
                                      [notificationUUID]).first?.decodeOptional(0)
    }
}

struct PipelineTimeout: Error, CustomStringConvertible {
    let description: String
}
