import API
import Accounts
import AppStore
import Crypto
import Foundation
import HTTP
import Logging
import Mirror
import Metrics
import Postgres
import Simulator
import StoreModel
@testable import Sync
import TestPKI
import TestSupport
import Testing

/// The Mobile Stores API on loopback as `serve` runs it: a real server on a port of its own, logged in as a
/// member of `storesync_api` (so every test also proves the role's grants), in a database of the test's own,
/// with an account whose Apple connection (and optionally Google connection) talks to local store simulators
/// that send no notifications: whatever the mirror holds came through the API.
struct APIHarness {
    static let host = "billing.test"
    static let bundleID = "com.example.api"
    static let appAppleID: Int64 = 1_234_567_890
    static let packageName = "com.example.api"

    struct Options {
        /// A second App Store simulator for the same app in Apple's Sandbox, where the Production connection looks
        /// up what Production does not know.
        var appleSandbox = false
        /// A Play simulator and a Production Google connection to it.
        var google = false
        var requireIssuedTokens = true
        var rateLimit = 500
        /// The connections' environment (both stores'); a Sandbox Apple connection talks to a Sandbox simulator.
        var environment: StoreEnvironment = .production
        /// The app endpoints' limits: requests per minute per token, failures per minute per address.
        var appTokenRateLimit = 120
        var appAddressFailureLimit = 60
        /// Proxies whose `X-Forwarded-For` names the client (`STORESYNC_API_TRUSTED_PROXIES`).
        var trustedProxies: [IPAddressRange] = []
    }

    let database: TestDatabase
    let accountID: Int64
    let apple: AppStoreSimulator
    let appleSandbox: AppStoreSimulator?
    let play: PlaySimulator?
    let appleConnection: StoreConnection
    let googleConnection: StoreConnection?
    /// The API's base URL, `http://127.0.0.1:PORT`.
    let baseURL: String
    /// An API client of the account with the default scope, and its secret.
    let clientID: String
    let clientSecret: String
    /// The test database's URL logging in as the API's role (a member of `storesync_api`).
    let apiRoleURL: String
    private let client: HTTPClient

    static func with(_ options: Options = Options(), _ body: (APIHarness) async throws -> Void) async throws {
        try await TestDatabase.with(poolSize: 4) { database in
            let role = try await TestRole.create(memberOf: "storesync_api", for: database)
            let apiPool = PostgresPool(PostgresConfiguration(url: role.url, poolSize: 4, acquireTimeout: .seconds(20),
                                                             applicationName: "storesync-api-tests"))
            let key = try PrivateKey.generate(.ecP256)
            let pki = try LocalApplePKI.generate()
            func appleSimulator(_ environment: AppStoreEnvironment) throws -> AppStoreSimulator {
                let apiKey = SimulatedAPIKey(keyID: "KEY123", issuerID: "issuer-1", publicKey: key.publicKey)
                var configuration = SimulatorConfiguration(apps: [SimulatedApp(bundleID: bundleID, appAppleID: appAppleID,
                                                                               environment: environment, apiKey: apiKey)])
                configuration.pki = pki
                // Apple's two environments never share a transaction id; nor do the two simulators.
                if environment == .sandbox { configuration.transactionNumberBase = 2_500_000_000_000_000 }
                return try AppStoreSimulator(configuration: configuration)
            }
            let apple = try appleSimulator(options.environment == .sandbox ? .sandbox : .production)
            let sandbox = options.appleSandbox ? try appleSimulator(.sandbox) : nil
            let serviceAccountKey = try PrivateKey.generate(.rsa(bits: 2048))
            let play = options.google ? try PlaySimulator(configuration: PlaySimulatorConfiguration(
                apps: [SimulatedPlayApp(packageName: packageName)],
                serviceAccount: SimulatedServiceAccount(clientEmail: "storesync@storesync-simulator.iam.gserviceaccount.com",
                                                        publicKey: serviceAccountKey.publicKey))) : nil

            let setup = try await database.pool.transaction { db in
                let accountID = try Catalog.addAccount(host: host, on: db)
                _ = try db.query("""
                    UPDATE accounts SET api_rate_limit = $2, app_token_rate_limit = $3, app_address_failure_limit = $4
                    WHERE id = $1
                    """, [accountID, options.rateLimit, options.appTokenRateLimit, options.appAddressFailureLimit])
                var new = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: bundleID,
                                                environment: options.environment)
                new.appAppleID = appAppleID
                new.requireIssuedTokens = options.requireIssuedTokens
                new.apiKeyID = "KEY123"
                new.apiIssuerID = "issuer-1"
                new.apiPrivateKeyPEM = try key.pem()
                new.apiBaseURL = apple.baseURL
                new.sandboxAPIBaseURL = sandbox?.baseURL
                new.trustedRootsPEM = pki.root.pem
                let appleConnection = try Catalog.addConnection(new, on: db)
                let price = try Catalog.addPlanPrice(accountID: accountID, planCode: "pro", priceCode: "pro-monthly",
                                                     amount: Money(minorUnits: 999, currency: "USD"), entitlements: ["pro"],
                                                     on: db)
                try Catalog.mapProduct(connectionID: appleConnection.id, productID: "pro.monthly", planPriceID: price, on: db)
                var googleConnection: StoreConnection?
                if let play {
                    var google = Catalog.NewConnection(accountID: accountID, store: .google, appIdentifier: packageName,
                                                       environment: options.environment)
                    google.requireIssuedTokens = options.requireIssuedTokens
                    google.apiClientEmail = "storesync@storesync-simulator.iam.gserviceaccount.com"
                    google.apiPrivateKeyPEM = try serviceAccountKey.pem()
                    google.apiTokenURI = play.tokenURI
                    google.apiBaseURL = play.baseURL
                    google.pushAudience = "https://billing.test/webhook/google-play"
                    google.pushServiceAccount = "push@storesync-simulator.iam.gserviceaccount.com"
                    google.pushJWKSURL = play.certificatesURL
                    let added = try Catalog.addConnection(google, on: db)
                    try Catalog.mapProduct(connectionID: added.id, productID: "pro.monthly", basePlanID: "monthly",
                                           planPriceID: price, on: db)
                    googleConnection = added
                }
                let created = try APIClients.add(accountID: accountID, name: "backend", sha256: { Digest.sha256($0) }, on: db)
                return (accountID, appleConnection, googleConnection, created)
            }

            let storeHTTP = try HTTPClient()
            let api = MobileStoresAPI(pool: apiPool, registrar: PurchaseRegistrar(http: storeHTTP), metrics: MetricsRegistry(),
                                      clientAddresses: ClientAddressRule(trustedProxies: options.trustedProxies))
            var router = HTTPRouter()
            api.install(into: &router)
            var configuration = HTTPServerConfiguration()
            configuration.maxBodyBytes = 16 * 1024
            configuration.refusal = { status, message, path in
                MobileStoresAPI.owns(path) ? MobileStoresAPI.refusal(status: status, message: message)
                    : HTTPResponse.error(status, message)
            }
            let server = try HTTPServer(configuration: configuration, router: router)
            let client = try HTTPClient()
            let harness = APIHarness(database: database, accountID: setup.0, apple: apple, appleSandbox: sandbox, play: play,
                                     appleConnection: setup.1, googleConnection: setup.2,
                                     baseURL: "http://127.0.0.1:\(server.port)", clientID: setup.3.client.id,
                                     clientSecret: setup.3.secret, apiRoleURL: role.url, client: client)
            func shutDown() async {
                await server.stop(grace: .seconds(1))
                await client.shutdown()
                await storeHTTP.shutdown()
                await apple.stop()
                await sandbox?.stop()
                await play?.stop()
                await apiPool.close()
                await role.drop()
            }
            do {
                try await body(harness)
            } catch {
                await shutDown()
                throw error
            }
            await shutDown()
        }
    }

    /// An answer, its JSON body parsed.
    struct Answer {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: Data

        func header(_ name: String) -> String? { headers.first { $0.name == name.lowercased() }?.value }

        var json: [String: Any] {
            get throws {
                let object = try JSONSerialization.jsonObject(with: body)
                return try #require(object as? [String: Any], "not a JSON object: \(String(decoding: body, as: UTF8.self))")
            }
        }

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends a request to the API as the tenant's host (`host`, unless told otherwise).
    func send(_ method: String, _ path: String, json: String? = nil, bearer: String? = nil,
              headers: [(name: String, value: String)] = [], host: String = APIHarness.host) async throws -> Answer {
        var all = [(name: "Host", value: host)] + headers
        if let bearer { all.append(("Authorization", "Bearer \(bearer)")) }
        if json != nil { all.append(("Content-Type", "application/json")) }
        let response = try await client.send(HTTPClientRequest(method: method, url: baseURL + path, headers: all,
                                                               body: json.map { Data($0.utf8) }))
        return Answer(status: response.status, headers: response.headers, body: response.body)
    }

    /// Sends `body` exactly as given, with only the headers given (and the host's).
    func sendRaw(_ method: String, _ path: String, body: Data,
                 headers: [(name: String, value: String)]) async throws -> Answer {
        let response = try await client.send(HTTPClientRequest(method: method, url: baseURL + path,
                                                               headers: [(name: "Host", value: APIHarness.host)] + headers,
                                                               body: body))
        return Answer(status: response.status, headers: response.headers, body: response.body)
    }

    /// Sends `template` as a backend would for a new customer of the account: its `"C"` becomes the
    /// customer's id (the tables of field rules are written once for any customer).
    func sendForNewCustomer(_ method: String, _ path: String, template: String) async throws -> Answer {
        let customer = try await addCustomer()
        return try await send(method, path, json: template.replacingOccurrences(of: #""C""#, with: "\"\(customer)\""),
                              bearer: try await accessToken())
    }

    /// A form POST to `/oauth/token`.
    func requestToken(_ fields: [(String, String)], headers: [(name: String, value: String)] = [],
                      host: String = APIHarness.host) async throws -> Answer {
        let all = [(name: "Host", value: host), (name: "Content-Type", value: "application/x-www-form-urlencoded")] + headers
        let response = try await client.send(HTTPClientRequest(method: "POST", url: baseURL + "/oauth/token", headers: all,
                                                               body: Data(PercentEncoding.form(fields).utf8)))
        return Answer(status: response.status, headers: response.headers, body: response.body)
    }

    /// An access token of the harness's client, from the token endpoint.
    func accessToken() async throws -> String {
        let answer = try await requestToken([("grant_type", "client_credentials"), ("client_id", clientID),
                                             ("client_secret", clientSecret)])
        #expect(answer.status == 200, "\(answer.text)")
        return try #require(try answer.json["access_token"] as? String)
    }

    /// A new customer of the account.
    func addCustomer() async throws -> String {
        let accountID = accountID
        return try await database.pool.transaction { db in try Catalog.addCustomer(accountID: accountID, on: db) }
    }

    /// A new customer with an issued account token.
    func customerWithToken() async throws -> (id: String, token: UUID) {
        let customer = try await addCustomer()
        let issued = try await database.pool.transaction { db in
            try AccountTokens.issue(customerID: customer, sha256: { Digest.sha256($0) }, on: db)
        }
        return (customer, try #require(UUID(uuidString: issued.token)))
    }

    /// An app's account token pair, as `POST /mobile-stores/account-tokens` hands it to the backend.
    struct AppPair {
        let customerID: String
        let token: String
        let secret: String

        var headers: [(name: String, value: String)] {
            [("X-SF-Account-Token", token), ("X-SF-Client-Secret", secret)]
        }
    }

    /// A new customer with an issued account token, and the token's secret.
    func customerWithPair() async throws -> AppPair {
        let customer = try await addCustomer()
        let issued = try await database.pool.transaction { db in
            try AccountTokens.issue(customerID: customer, sha256: { Digest.sha256($0) }, on: db)
        }
        return AppPair(customerID: customer, token: issued.token, secret: try #require(issued.secret))
    }

    /// Sends a request as the app holding `pair` would.
    func sendAsApp(_ method: String, _ path: String, json: String? = nil, pair: AppPair,
                   headers: [(name: String, value: String)] = []) async throws -> Answer {
        try await send(method, path, json: json, headers: pair.headers + headers)
    }

    /// The row count of every table a purchase can leave a trace in, to show that nothing was recorded.
    func traces() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in ["store_purchases", "customer_subscriptions", "invoices", "payments", "refunds", "purchase_events",
                      "purchase_tokens", "consumption_usage", "jobs", "account_tokens", "customers"] {
            counts[table] = try await scalar("SELECT count(*) FROM \(table)", as: Int.self)
        }
        return counts
    }

    /// Mirrors an Apple lineage exactly as a notification's job would (the store's own word, no claimant) and
    /// answers the customer it was linked to, if any: an untagged purchase stays a pending claim.
    func mirrorAsANotificationWould(_ lineage: String) async throws -> String? {
        let http = try HTTPClient()
        do {
            let clients = AppleStoreClients(http: http, rateLimitShare: 1, historyPages: 50, metrics: nil)
            let connection = appleConnection
            let tools = try await clients.tools(for: connection, pool: database.pool)
            let fetched = try await AppleRefetch(client: tools.client, logger: Logger(component: "test"))
                .fetch(connection: connection, lineage: lineage, transactionID: lineage, revision: nil,
                       source: SnapshotSource(kind: "notification", reference: nil, event: "SUBSCRIBED"))
            await http.shutdown()
            let outcome = try await database.pool.transaction { db in
                try Mirror.apply(fetched.snapshot, connection: connection, on: db)
            }
            return outcome.customerID
        } catch {
            await http.shutdown()
            throw error
        }
    }

    /// A web subscription of plan "pro" for `customer`, as SubscriptionFlow's web side would write it, cancelled
    /// `cancelledInSeconds` from now (nil: not cancelled).
    @discardableResult
    func addWebSubscription(customer: String, status: String, cancelledInSeconds: Int? = nil) async throws -> Int64 {
        let accountID = accountID
        return try await database.pool.transaction { db in
            let price: Int64 = try db.query("""
                SELECT pp.id FROM plan_prices pp JOIN plans p ON p.id = pp.plan_id WHERE p.account_id = $1 AND p.code = 'pro'
                """, [accountID])[0].decode(0)
            return try db.query("""
                INSERT INTO customer_subscriptions (account_id, customer_id, plan_price_id, source, status, cancelled_at)
                VALUES ($1, $2::uuid, $3, 'web', $4, now() + $5 * interval '1 second') RETURNING id
                """, [accountID, customer, price, status, cancelledInSeconds])[0].decode(0)
        }
    }

    /// A purchase of the mapped `pro.monthly` on the App Store simulator (its Sandbox with `sandbox`), sending
    /// no notification: whatever the mirror then holds came through the API.
    func buyOnAppStore(appAccountToken: UUID? = nil, sandbox: Bool = false) async throws -> ScenarioResult {
        let store = sandbox ? try #require(appleSandbox, "the harness has no Sandbox simulator") : apple
        return try await store.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                         appAccountToken: appAccountToken, silent: true)
    }

    /// A purchase of the mapped `pro.monthly` base plan `monthly` on the Play simulator (a licence tester's with
    /// `testPurchase`), sending no notification.
    func buyOnPlay(obfuscatedAccountId: String? = nil, testPurchase: Bool = false) async throws -> PlayScenarioResult {
        try await #require(play, "the harness has no Play simulator").purchase(
            productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
            obfuscatedAccountId: obfuscatedAccountId, testPurchase: testPurchase, silent: true)
    }

    /// The App Store simulator answers the next requests (a registration's retries included) with 500, or with
    /// 429 and a `Retry-After` of 7 s.
    func makeAppleUnavailable(rateLimited: Bool) throws {
        if rateLimited {
            try apple.rateLimitNextRequests(4, retryAfter: .seconds(7))
        } else {
            try apple.failNextRequests(4)
        }
    }

    /// One value of the test's database, read as its owner.
    func scalar<T: PostgresDecodable>(_ sql: String, _ parameters: [any PostgresEncodable] = [], as: T.Type = T.self)
        async throws -> T?
    {
        try await database.pool.query(sql, parameters).first?.decodeOptional(0, as: T.self)
    }
}
