import Crypto
import Foundation
import HTTP

/// A local Google Play for StoreSync's tests, benchmarks and demos, and for app teams testing offline.
///
/// It serves what StoreSync calls at Google — the OAuth token endpoint (checking service-account assertions
/// as Google does), the key set push tokens are signed with, and the Play Developer API endpoints for
/// subscriptions (`subscriptionsv2.get`, `subscriptions.acknowledge`), orders (`orders.get`,
/// `orders.batchGet`) and voided purchases — with Google's JSON; and it runs scenarios — purchases, renewals,
/// payment failures, pauses, plan changes, refunds — that change its state as Google would and push the
/// matching Real-time developer notifications through a simulated Pub/Sub push subscription, OIDC-signed and
/// redelivered until acknowledged. Its clock moves only when a scenario moves it, so runs are reproducible.
/// Faults (429, 500, permission errors, latency, lost, duplicated or badly signed pushes) can be injected.
///
/// Point a store connection's API base URL at `baseURL`, its key file's `token_uri` at `tokenURI` and its push
/// verifier's key set URL at `certificatesURL`.
public final class PlaySimulator: Sendable {
    /// The bound port, also when the configuration asked for port 0.
    public let port: UInt16
    /// `http://HOST:PORT`: the base of the Play Developer API paths (`/androidpublisher/v3/…`).
    public let baseURL: String
    /// The OAuth token endpoint: the `aud` assertions must carry and the key file's `token_uri`.
    public let tokenURI: String
    /// The push keys' JWKS, fetched instead of `https://www.googleapis.com/oauth2/v3/certs`.
    public let certificatesURL: String
    let core: PlayCore
    private let server: HTTPServer
    private let serviceAccountEmail: String

    /// Starts listening at once. Generates the push signing key unless the configuration brings one.
    public init(configuration: PlaySimulatorConfiguration) throws {
        let apps = try configuration.validated()
        let keys = try PushKeyRing(initial: try configuration.pushSigningKey ?? PrivateKey.generate(.rsa(bits: 2048)))
        let pusher = try PubSubPusher(target: configuration.push, client: configuration.pushClient, keys: keys,
                                      policy: configuration.pushRetry.validated())
        core = PlayCore(apps: apps, configuration: configuration, keys: keys, pusher: pusher)
        serviceAccountEmail = configuration.serviceAccount.clientEmail
        var router = HTTPRouter()
        core.installAPI(into: &router)
        core.installControl(into: &router)
        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = configuration.host
        serverConfiguration.port = configuration.port
        serverConfiguration.maxConnectionsPerClient = nil  // its clients (workers, benchmarks) share one address
        server = try HTTPServer(configuration: serverConfiguration, router: router)
        port = server.port
        let urlHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        baseURL = "http://\(urlHost):\(port)"
        tokenURI = baseURL + PlayCore.tokenPath
        certificatesURL = baseURL + PlayCore.certificatesPath
        core.tokenURI.withLock { [tokenURI] in $0 = tokenURI }
    }

    /// Stops serving (requests in flight get `grace` to finish), stops redelivering and closes the push client.
    public func stop(grace: Duration = .seconds(2)) async {
        await server.stop(grace: grace)
        await core.pusher.shutdown()
    }

    // MARK: Service account

    /// A service-account JSON key file for `privateKey` (the key whose public half the simulator was configured
    /// with), its `token_uri` pointing here: what StoreSync's Google connection is configured with.
    public func serviceAccountKeyFile(privateKey: PrivateKey, privateKeyID: String? = nil) throws -> Data {
        var key: [String: Any] = [
            "type": "service_account", "project_id": "storesync-simulator", "private_key": try privateKey.pem(),
            "client_email": serviceAccountEmail, "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs", "universe_domain": "googleapis.com",
        ]
        key["private_key_id"] = privateKeyID
        return try JSONSerialization.data(withJSONObject: key, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
    }

    /// Writes `serviceAccountKeyFile` to `path`, readable by its owner only.
    public func writeServiceAccountKeyFile(to path: String, privateKey: PrivateKey, privateKeyID: String? = nil) throws {
        guard FileManager.default.createFile(atPath: path, contents: try serviceAccountKeyFile(privateKey: privateKey,
                                                                                               privateKeyID: privateKeyID),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw SimulatorError(.invalidArgument, "cannot write the service-account key file \(path)")
        }
    }

    // MARK: Clock

    /// The simulated time: what scenarios happen at and what notifications and API answers report.
    public var now: Date { Date(milliseconds: core.state.withLock { $0.now }) }

    /// Moves the simulated clock forward; it never moves back.
    public func advanceClock(by duration: Duration) throws {
        try core.state.withLock { try $0.advanceClock(by: duration) }
    }

    /// Moves the simulated clock forward to `date` (an earlier date leaves it unchanged).
    public func advanceClock(to date: Date) {
        core.state.withLock { $0.advanceClock(to: date.milliseconds) }
    }

    // MARK: Access tokens and push keys

    /// Access tokens issued by the token endpoint so far.
    public var issuedAccessTokenCount: Int { core.accessTokens.issuedCount }

    /// Ends every access token issued so far, as their expiry would: the next API call answers 401.
    public func expireAccessTokens() {
        core.accessTokens.expireAll()
    }

    /// The `kid`s the key set publishes, oldest first; the last one signs pushes.
    public var pushKeyIDs: [String] { core.keys.publishedKeyIDs }

    /// Makes `key` (generated when `nil`) the push signing key. With `keepPrevious` the older keys stay
    /// published (up to two), as during Google's rotations; without, tokens signed by them stop verifying.
    /// Returns the new `kid`.
    @discardableResult
    public func rotatePushKey(to key: PrivateKey? = nil, keepPrevious: Bool = true) throws -> String {
        try core.keys.rotate(to: key ?? PrivateKey.generate(.rsa(bits: 2048)), keepPrevious: keepPrevious)
    }

    // MARK: Faults

    /// The faults still to be injected: counts go down as requests and pushes consume them.
    public var faults: PlayFaultSettings { core.faults.current }

    /// Replaces every fault setting at once; refused (and nothing changed) when a value is out of range.
    public func setFaults(_ settings: PlayFaultSettings) throws {
        try core.faults.replace(settings)
    }

    /// The next `count` API requests answer 429 with `Retry-After` in whole seconds (rounded up).
    public func rateLimitNextRequests(_ count: Int, retryAfter: Duration = .seconds(1)) throws {
        try core.faults.update {
            $0.rateLimitedRequests = count
            $0.retryAfterSeconds = (retryAfter.wholeMilliseconds + 999) / 1000
        }
    }

    /// The next `count` API requests answer 500 `backendError`.
    public func failNextRequests(_ count: Int) throws {
        try core.faults.update { $0.failedRequests = count }
    }

    /// The next `count` API requests answer 401 `permissionDenied`.
    public func denyPermissionForNextRequests(_ count: Int) throws {
        try core.faults.update { $0.permissionDeniedRequests = count }
    }

    /// Added before every API answer, without holding a thread.
    public func setLatency(_ latency: Duration) throws {
        try core.faults.update { $0.latencyMilliseconds = latency.wholeMilliseconds }
    }

    /// The next `count` messages are never delivered.
    public func dropNextPushes(_ count: Int) throws {
        try core.faults.update { $0.droppedPushes = count }
    }

    /// The next message is delivered `copies` extra times in a row, with the same `messageId`.
    public func duplicateNextPush(copies: Int) throws {
        try core.faults.update { $0.duplicatedPushCopies = copies }
    }

    /// The next `count` messages carry `fault` instead of a valid push token, on every delivery.
    public func sendBadPushTokens(_ fault: PushTokenFault, count: Int = 1) throws {
        try core.faults.update {
            $0.badPushTokens = count
            $0.badPushToken = count > 0 ? fault : nil
        }
    }

    // MARK: Observation

    /// Requests received per endpoint, whatever they were answered.
    public var requestCounts: [PlayEndpoint: Int] { core.counters.snapshot }

    public func requestCount(_ endpoint: PlayEndpoint) -> Int { core.counters.snapshot[endpoint] ?? 0 }

    public func resetRequestCounts() { core.counters.reset() }

    /// Why recent requests were refused (API 401s and token-endpoint 400s), newest last.
    public var authenticationFailures: [String] { core.authenticationFailures.withLock { $0 } }

    /// Every message published, oldest first, with its deliveries so far.
    public var pushes: [PlayPushRecord] { core.pusher.records }

    public func push(_ messageId: String) -> PlayPushRecord? { core.pusher.record(messageId) }

    public var acknowledgements: [PlayAcknowledgement] { core.state.withLock { $0.acknowledgements } }

    public func subscription(_ purchaseToken: String) -> SimulatedPlaySubscription? {
        core.state.withLock { $0.subscriptions[purchaseToken] }
    }

    public func order(_ orderId: String) -> SimulatedPlayOrder? {
        core.state.withLock { $0.orders[orderId] }
    }

    public var voidedPurchases: [VoidedPurchaseRecord] { core.state.withLock { $0.voided } }
}
