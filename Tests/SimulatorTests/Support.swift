import AppStore
import Crypto
import Foundation
import HTTP
import Simulator
import TestPKI
import Testing

/// The app, key and clock every simulator test uses; nothing depends on the day the tests run except the
/// API tokens, which — as with Apple — are checked against the wall clock.
enum Fixture {
    static let bundleID = "com.example.storesync"
    static let otherBundleID = "com.example.other"
    static let appAppleID: Int64 = 1_234_567_890
    static let keyID = "TESTKEY123"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let start = utc(2026, 1, 1)
    static let ingestHost = "billing.example.com"
    static let monthly = "com.example.storesync.monthly"
    static let yearly = "com.example.storesync.yearly"
    static let basic = "com.example.storesync.basic"

    /// One PKI and one API key per test process (P-384 generation is the slow part); the PKI is valid far
    /// around `start` so scenarios can move the clock by years.
    static let pki = Result { () throws -> LocalApplePKI in
        var options = LocalApplePKI.Options()
        options.validity = utc(2020)...utc(2060)
        return try LocalApplePKI.generate(options)
    }
    static let apiKey = Result { try PrivateKey.generate(.ecP256) }
    static let foreignKey = Result { try PrivateKey.generate(.ecP256) }

    static func app(_ bundleID: String = bundleID, environment: AppStoreEnvironment = .production) throws -> SimulatedApp {
        SimulatedApp(bundleID: bundleID, appAppleID: environment == .production ? appAppleID : nil, environment: environment,
                     apiKey: SimulatedAPIKey(keyID: keyID, issuerID: issuerID, publicKey: try apiKey.get().publicKey))
    }
}

func utc(_ year: Int, _ month: Int = 1, _ day: Int = 1) -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar.date(from: DateComponents(year: year, month: month, day: day))!
}

func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

/// A value behind a lock, for what handlers record and tests read.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var current: Value { withLock { $0 } }
}

/// A stand-in for StoreSync's ingest: records every notification POST and answers `status`.
final class IngestRecorder: Sendable {
    struct Received: Sendable {
        let host: String?
        let contentType: String?
        let body: Data
    }

    let received = Locked<[Received]>([])
    let status = Locked(200)
    let server: HTTPServer
    var url: String { "http://127.0.0.1:\(server.port)/webhook/apple" }

    init() throws {
        var router = HTTPRouter()
        let received = received, status = status
        router.route("POST", "/webhook/apple") { request in
            received.withLock { $0.append(Received(host: request.header("host"), contentType: request.header("content-type"),
                                                   body: request.body)) }
            return HTTPResponse(status: status.current)
        }
        server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
    }

    /// The `signedPayload` of every notification received, in order.
    func signedPayloads() throws -> [String] {
        try received.current.map { received in
            let object = try JSONSerialization.jsonObject(with: received.body) as? [String: Any]
            return try #require(object?["signedPayload"] as? String)
        }
    }
}

/// A simulator for one test: its app(s), an ingest it notifies, a client and verifiers for its answers.
final class Harness: Sendable {
    let simulator: AppStoreSimulator
    let ingest: IngestRecorder
    let client: HTTPClient
    let verifier: SignedDataVerifier

    init(apps: [SimulatedApp]? = nil, notify: Bool = true) throws {
        ingest = try IngestRecorder()
        var configuration = SimulatorConfiguration(apps: try apps ?? [Fixture.app()])
        configuration.clockStart = Fixture.start
        configuration.pki = try Fixture.pki.get()
        if notify { configuration.notificationTarget = NotificationTarget(url: ingest.url, host: Fixture.ingestHost) }
        simulator = try AppStoreSimulator(configuration: configuration)
        client = try HTTPClient()
        let app = configuration.apps[0]
        verifier = try SignedDataVerifier(roots: [simulator.rootCertificate], bundleID: app.bundleID,
                                          appAppleID: app.appAppleID, environment: app.environment, chainCacheSize: 0)
    }

    func close() async {
        await simulator.stop()
        await ingest.server.stop(grace: .seconds(1))
        await client.shutdown()
    }

    /// A valid server-API token for `bundleID`.
    func token(bundleID: String = Fixture.bundleID) throws -> String {
        try AppStoreAPIToken(keyID: Fixture.keyID, issuerID: Fixture.issuerID, bundleID: bundleID,
                             privateKey: Fixture.apiKey.get()).make(lifetime: .seconds(300))
    }

    /// A server-API request with a valid token (unless `authorization` overrides it).
    func send(_ method: String = "GET", _ path: String, body: Data? = nil, authorization: String? = nil) async throws
        -> HTTPClientResponse
    {
        var headers: [(name: String, value: String)] = [("Authorization", try authorization ?? "Bearer \(token())")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        return try await client.send(HTTPClientRequest(method: method, url: simulator.baseURL + path, headers: headers,
                                                       body: body, timeout: .seconds(10)))
    }

    /// A control-API request.
    func control(_ method: String, _ path: String, _ json: String? = nil) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(method: method, url: simulator.baseURL + path,
                                                headers: [("Content-Type", "application/json")],
                                                body: json.map { Data($0.utf8) }, timeout: .seconds(10)))
    }

    /// Subscribes a monthly plan at 9.99 USD, silently unless asked.
    @discardableResult
    func subscribe(silent: Bool = true, freeTrial: Bool = false, familyShared: Bool = false) async throws -> String {
        try await simulator.subscribe(productId: Fixture.monthly, price: 9990, currency: "USD",
                                      appAccountToken: UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"),
                                      freeTrial: freeTrial, familyShared: familyShared, silent: silent).originalTransactionId
    }
}

/// A response body as a JSON object.
func jsonObject(_ response: HTTPClientResponse) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
}

/// Apple's error code in a response body.
func errorCode(_ response: HTTPClientResponse) -> Int64? {
    struct Body: Decodable {
        let errorCode: Int64
        let errorMessage: String
    }
    return (try? JSONDecoder().decode(Body.self, from: response.body))?.errorCode
}

/// The code of the `SimulatorError` `body` throws, or nil.
func simulatorErrorCode(_ body: () async throws -> Void) async -> SimulatorError.Code? {
    do {
        try await body()
        return nil
    } catch let error as SimulatorError {
        return error.code
    } catch {
        return nil
    }
}

struct TimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Re-checks `condition` every 5 ms until it holds; fails after `limit`, so no test waits unboundedly.
func waitUntil(_ what: String, within limit: Duration, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TimedOut(description: "timed out after \(limit) waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
