import Crypto
import Foundation
import GooglePlay
import HTTP
import Simulator
import Testing

/// The package, accounts, keys and clock every Play simulator test uses. RSA keys are generated once per
/// test process; the clock starts at a time with milliseconds, so timestamps carry fractional seconds.
enum GoogleFixture {
    static let packageName = "com.example.storesync"
    static let otherPackageName = "com.example.other"
    static let serviceAccountEmail = "storesync@storesync-test.iam.gserviceaccount.com"
    static let pushEmail = "pubsub-push@storesync-test.iam.gserviceaccount.com"
    static let audience = "https://billing.example.com/webhook/google-play"
    static let ingestHost = "billing.example.com"
    static let monthly = "premium_monthly"
    static let yearly = "premium_yearly"
    static let start = utc(2026, 1, 1).addingTimeInterval(0.123)
    static let day: Int64 = 86_400_000

    static let serviceAccountKey = Result { try PrivateKey.generate(.rsa(bits: 2048)) }
    static let pushKey = Result { try PrivateKey.generate(.rsa(bits: 2048)) }
    static let secondPushKey = Result { try PrivateKey.generate(.rsa(bits: 2048)) }
    static let foreignKey = Result { try PrivateKey.generate(.rsa(bits: 2048)) }

    /// Redelivery fast enough for tests: 20 ms doubling to 80 ms, four attempts.
    static let fastRetry = PushRetryPolicy(minimumBackoff: .milliseconds(20), maximumBackoff: .milliseconds(80), maxAttempts: 4)
}

/// A stand-in for StoreSync's push endpoint: records every push and answers the scripted statuses in order,
/// repeating the last.
final class PushRecorder: Sendable {
    struct Received: Sendable {
        let host: String?
        let authorization: String?
        let contentType: String?
        let userAgent: String?
        let body: Data
    }

    let received = Locked<[Received]>([])
    let statuses = Locked([204])
    let server: HTTPServer
    var url: String { "http://127.0.0.1:\(server.port)/webhook/google-play" }

    init() throws {
        var router = HTTPRouter()
        let received = received, statuses = statuses
        router.route("POST", "/webhook/google-play") { request in
            received.withLock {
                $0.append(Received(host: request.header("host"), authorization: request.header("authorization"),
                                   contentType: request.header("content-type"), userAgent: request.header("user-agent"),
                                   body: request.body))
            }
            let status = statuses.withLock { statuses in statuses.count > 1 ? statuses.removeFirst() : statuses[0] }
            return HTTPResponse(status: status)
        }
        server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
    }

    /// The wrapped Pub/Sub messages received, in order.
    func messages() throws -> [PushMessage] {
        try received.current.map { try PushMessage($0.body) }
    }
}

/// A received push body, unwrapped: the envelope's fields and the decoded `DeveloperNotification`.
struct PushMessage {
    let envelope: [String: Any]
    let message: [String: Any]
    let notification: [String: Any]

    init(_ body: Data) throws {
        envelope = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        message = try #require(envelope["message"] as? [String: Any])
        let encoded = try #require(message["data"] as? String)
        let data = try #require(Data(base64Encoded: encoded))
        notification = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    var messageId: String? { message["messageId"] as? String }
    var subscriptionNotification: [String: Any]? { notification["subscriptionNotification"] as? [String: Any] }
    var notificationType: Int? { subscriptionNotification?["notificationType"] as? Int }
}

/// Fetches the simulator's key set over HTTP, as StoreSync's fetcher fetches Google's.
struct SimulatorJWKSFetcher: JWKSFetcher {
    let url: String
    let client: HTTPClient
    let fetches = Locked(0)

    func fetchKeySet() async throws -> JWKSDocument {
        fetches.withLock { $0 += 1 }
        let response = try await client.send(HTTPClientRequest(url: url, timeout: .seconds(10)))
        guard response.status == 200 else { throw HTTPClientError(.other, "JWKS answered \(response.status)") }
        return JWKSDocument(json: response.body,
                            maxAge: response.header("cache-control").flatMap(JWKSDocument.maxAge(fromCacheControl:)))
    }
}

/// A Play simulator for one test: its app(s), a push endpoint it posts to, a client and helpers for the API.
final class GoogleHarness: Sendable {
    let simulator: PlaySimulator
    let ingest: PushRecorder
    let client: HTTPClient

    init(push: Bool = true, packages: [String] = [GoogleFixture.packageName], retry: PushRetryPolicy = GoogleFixture.fastRetry,
         accessTokenLifetime: Duration = .seconds(3599), configure: (inout PlaySimulatorConfiguration) -> Void = { _ in }) throws {
        ingest = try PushRecorder()
        var configuration = PlaySimulatorConfiguration(
            apps: packages.map(SimulatedPlayApp.init(packageName:)),
            serviceAccount: SimulatedServiceAccount(clientEmail: GoogleFixture.serviceAccountEmail,
                                                    publicKey: try GoogleFixture.serviceAccountKey.get().publicKey))
        configuration.clockStart = GoogleFixture.start
        configuration.pushSigningKey = try GoogleFixture.pushKey.get()
        configuration.pushRetry = retry
        configuration.accessTokenLifetime = accessTokenLifetime
        if push {
            var target = PlayPushTarget(url: ingest.url, audience: GoogleFixture.audience, serviceAccountEmail: GoogleFixture.pushEmail)
            target.host = GoogleFixture.ingestHost
            configuration.push = target
        }
        configure(&configuration)
        simulator = try PlaySimulator(configuration: configuration)
        client = try HTTPClient()
    }

    func close() async {
        await simulator.stop()
        await ingest.server.stop(grace: .seconds(1))
        await client.shutdown()
    }

    /// Posts a token request with `assertion`.
    func requestToken(assertion: String, grantType: String = "urn:ietf:params:oauth:grant-type:jwt-bearer") async throws
        -> HTTPClientResponse
    {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let form = "grant_type=\(grantType.addingPercentEncoding(withAllowedCharacters: allowed)!)&assertion=\(assertion)"
        return try await client.send(HTTPClientRequest(method: "POST", url: simulator.tokenURI,
                                                       headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                       body: Data(form.utf8), timeout: .seconds(10)))
    }

    /// A live access token, obtained as StoreSync obtains one.
    func accessToken() async throws -> String {
        let assertion = try ServiceAccountAssertion.make(clientEmail: GoogleFixture.serviceAccountEmail,
                                                         privateKey: GoogleFixture.serviceAccountKey.get(),
                                                         tokenURI: simulator.tokenURI)
        let response = try await requestToken(assertion: assertion)
        #expect(response.status == 200)
        return try #require(try jsonObject(response)["access_token"] as? String)
    }

    /// A Play Developer API request (`path` after `/androidpublisher/v3/applications/{package}/`) with a live
    /// access token unless `authorization` overrides it.
    func api(_ method: String = "GET", _ path: String, package: String = GoogleFixture.packageName, body: Data? = nil,
             authorization: String? = nil) async throws -> HTTPClientResponse {
        let header: String
        if let authorization { header = authorization } else { header = "Bearer \(try await accessToken())" }
        var headers: [(name: String, value: String)] = [("Authorization", header)]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        return try await client.send(HTTPClientRequest(
            method: method, url: "\(simulator.baseURL)/androidpublisher/v3/applications/\(package)/\(path)", headers: headers,
            body: body, timeout: .seconds(10)))
    }

    /// `subscriptionsv2.get` for `token`, as JSON.
    func subscriptionV2(_ token: String) async throws -> [String: Any] {
        let response = try await api("GET", "purchases/subscriptionsv2/tokens/\(token)")
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        return try jsonObject(response)
    }

    /// A control-API request.
    func control(_ method: String, _ path: String, _ json: String? = nil) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(method: method, url: simulator.baseURL + path,
                                                headers: [("Content-Type", "application/json")],
                                                body: json.map { Data($0.utf8) }, timeout: .seconds(10)))
    }

    /// A push verifier configured as StoreSync's would be, fetching the simulator's key set over HTTP; its key
    /// cache runs on `cacheClock` when given (to move past the cache's refetch pacing), else the wall clock.
    func verifier(cacheClock: Locked<Date>? = nil) -> PushTokenVerifier {
        let fetcher = SimulatorJWKSFetcher(url: simulator.certificatesURL, client: client)
        let cache = cacheClock.map { clock in GoogleKeyCache(fetcher: fetcher, now: { clock.current }) } ?? GoogleKeyCache(fetcher: fetcher)
        return PushTokenVerifier(audience: GoogleFixture.audience, serviceAccountEmail: GoogleFixture.pushEmail, keys: cache)
    }

    /// Buys the monthly plan at 9.99 USD (1.59 of it tax), silently unless asked.
    @discardableResult
    func purchase(silent: Bool = true, testPurchase: Bool = false, accountId: String? = "account-7e3fb20b") async throws -> String {
        try #require(try await simulator.purchase(packageName: GoogleFixture.packageName, productId: GoogleFixture.monthly,
                                                  basePlanId: "monthly", price: 999, tax: 159,
                                                  currency: "USD", obfuscatedAccountId: accountId, testPurchase: testPurchase,
                                                  silent: silent).purchaseToken)
    }
}

/// The line item of a `SubscriptionPurchaseV2`.
func lineItem(_ subscription: [String: Any]) throws -> [String: Any] {
    try #require((subscription["lineItems"] as? [[String: Any]])?.first)
}

/// The `error` object of a Google error answer.
func googleError(_ response: HTTPClientResponse) throws -> [String: Any] {
    try #require(try jsonObject(response)["error"] as? [String: Any])
}

/// The first `reason` of a Google error answer.
func googleReason(_ response: HTTPClientResponse) -> String? {
    guard let error = try? googleError(response), let details = error["errors"] as? [[String: Any]] else { return nil }
    return details.first?["reason"] as? String
}
