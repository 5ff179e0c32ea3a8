import Accounts
import Crypto
import Foundation
import HTTP
import Logging
import Postgres
import Simulator
import StoreModel

/// The API benchmark's tenant: an account whose budget is lifted out of the way (the limiter still counts
/// every request), an App Store connection to a simulator in this process, plan `pro` granting `pro`, and
/// `customers` customers each with an active web subscription, so every read returns a real entitlement.
struct APIBenchTenant: Sendable {
    let host: String
    let customerIDs: [String]
    let client: APIClients.Created
    let simulator: AppStoreSimulator

    static func seed(customers: Int, pool: PostgresPool) async throws -> APIBenchTenant {
        let host = "api-\(UInt32.random(in: 0...UInt32.max)).bench.invalid"
        let key = try PrivateKey.generate(.ecP256)
        let app = SimulatedApp(bundleID: "com.example.bench", appAppleID: 1, environment: .production,
                               apiKey: SimulatedAPIKey(keyID: "BENCH", issuerID: "bench", publicKey: key.publicKey))
        let simulator = try AppStoreSimulator(configuration: SimulatorConfiguration(apps: [app]))
        let keyPEM = try key.pem()
        let (ids, client) = try await pool.transaction { db in
            let accountID = try Catalog.addAccount(host: host, on: db)
            try AccountDirectory.setAPIRateLimit(1_000_000, accountID: accountID, on: db)
            var new = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: "com.example.bench",
                                            environment: .production)
            new.appAppleID = 1
            new.apiKeyID = "BENCH"
            new.apiIssuerID = "bench"
            new.apiPrivateKeyPEM = keyPEM
            new.apiBaseURL = simulator.baseURL
            new.trustedRootsPEM = simulator.rootCertificate.pem
            let connection = try Catalog.addConnection(new, on: db)
            let price = try Catalog.addPlanPrice(accountID: accountID, planCode: "pro", priceCode: "monthly",
                                                 amount: Money(minorUnits: 999, currency: "USD"), entitlements: ["pro"], on: db)
            try Catalog.mapProduct(connectionID: connection.id, productID: "bench.monthly", planPriceID: price, on: db)
            let ids: [String] = try db.query("""
                WITH c AS (INSERT INTO customers (account_id) SELECT $1 FROM generate_series(1, $2) RETURNING id)
                INSERT INTO customer_subscriptions (account_id, customer_id, plan_price_id, source, status)
                SELECT $1, id, $3, 'web', 'active' FROM c RETURNING customer_id::text
                """, [accountID, customers, price]).map { try $0.decode(0) }
            let client = try APIClients.add(accountID: accountID, name: "bench", sha256: { Digest.sha256($0) }, on: db)
            return (ids, client)
        }
        // Statistics and a visibility map for what was just written, as autovacuum keeps them on a database in
        // service: without them the planner guesses, and index-only scans visit the heap.
        try await pool.query("VACUUM ANALYZE customers, customer_subscriptions, plan_prices, plan_entitlements, entitlements")
        return APIBenchTenant(host: host, customerIDs: ids, client: client, simulator: simulator)
    }

    func accessToken(base: String, client http: HTTPClient) async throws -> String {
        let form = PercentEncoding.form([("grant_type", "client_credentials"), ("client_id", client.client.id),
                                         ("client_secret", client.secret)])
        let answer = try await http.send(HTTPClientRequest(method: "POST", url: base + "/oauth/token", headers: [
            ("Host", host), ("Content-Type", "application/x-www-form-urlencoded"),
        ], body: Data(form.utf8)))
        guard answer.status == 200, let token = String(decoding: answer.body, as: UTF8.self)
            .firstMatch(of: /"access_token":"([^"]+)"/)?.output.1 else {
            throw BenchError("the token endpoint answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return String(token)
    }

    /// wrk's Lua: every request a GET of the next customer's entitlements.
    func readScript(token: String) -> String {
        """
        local ids = {\(customerIDs.map { "\"\($0)\"" }.joined(separator: ","))}
        local n = 0
        wrk.headers["Host"] = "\(host)"
        wrk.headers["Authorization"] = "Bearer \(token)"
        request = function()
          n = n + 1
          return wrk.format("GET", "/api/v1/mobile-stores/customers/" .. ids[(n % #ids) + 1] .. "/entitlements")
        end
        """
    }

    /// An account token pair for each customer, issued as the backend endpoint issues them, with the app
    /// limiter's per-token budget lifted out of the way (it still counts every request).
    func issuePairs(pool: PostgresPool) async throws -> [(token: String, secret: String)] {
        let (host, customerIDs) = (host, customerIDs)
        return try await pool.transaction { db in
            _ = try db.query("UPDATE accounts SET app_token_rate_limit = 1000000 WHERE host = $1", [host])
            return try customerIDs.map { customer in
                let issued = try AccountTokens.issue(customerID: customer, sha256: { Digest.sha256($0) }, on: db)
                guard let secret = issued.secret else { throw BenchError("customer \(customer) had a token already") }
                return (issued.token, secret)
            }
        }
    }

    /// wrk's Lua: every request an app's GET of its own entitlements, each with the next customer's pair.
    func appReadScript(pairs: [(token: String, secret: String)]) -> String {
        """
        local tokens = {\(pairs.map { "\"\($0.token)\"" }.joined(separator: ","))}
        local secrets = {\(pairs.map { "\"\($0.secret)\"" }.joined(separator: ","))}
        local n = 0
        request = function()
          n = n + 1
          local i = (n % #tokens) + 1
          return wrk.format("GET", "/api/v1/mobile-stores/client/entitlements", {
            ["Host"] = "\(host)", ["X-SF-Account-Token"] = tokens[i], ["X-SF-Client-Secret"] = secrets[i] })
        end
        """
    }

    /// What the registrations during the mixed run came to.
    struct Registrations: Sendable {
        var latencies: [Double] = []
        var failed = 0

        var json: JSONValue {
            let sorted = latencies.sorted()
            func percentile(_ p: Double) -> Double {
                sorted.isEmpty ? 0 : (sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 10).rounded() / 10
            }
            return .object([("registered", .int(latencies.count)), ("failed", .int(failed)),
                            ("p50_ms", .double(percentile(0.5))), ("p99_ms", .double(percentile(0.99)))])
        }
    }

    /// For `duration`, `perSecond` times a second: a customer buys on the simulator (no notification) and the
    /// backend registers the purchase, which the API re-fetches from the simulator and mirrors.
    func register(for duration: Duration, perSecond: Int, base: String, token: String,
                  client: HTTPClient) async throws -> Registrations {
        let clock = ContinuousClock()
        let end = clock.now + duration
        let interval = Duration.seconds(1) / perSecond
        var next = clock.now
        var result = Registrations()
        var index = 0
        while clock.now < end {
            let customer = customerIDs[index % customerIDs.count]
            index += 1
            let bought = try await simulator.subscribe(productId: "bench.monthly", price: 9_990, currency: "USD", silent: true)
            let started = clock.now
            let answer = try await client.send(HTTPClientRequest(method: "POST", url: base + "/api/v1/mobile-stores/purchases",
                headers: [("Host", host), ("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                body: Data(#"{"customer_id":"\#(customer)","store":"apple","transaction_id":"\#(bought.transactionId)"}"#.utf8)))
            if answer.status == 200 {
                result.latencies.append((clock.now - started).seconds * 1000)
            } else {
                result.failed += 1
                Logger(component: "bench").warning("registration failed", [
                    "status": .int(answer.status), "body": .string(String(decoding: answer.body.prefix(300), as: UTF8.self)),
                ])
            }
            next += interval
            if next > clock.now { try await Task.sleep(until: next) }
        }
        return result
    }

    func stop() async { await simulator.stop() }
}
