import AppStore
import Crypto
import Foundation
import HTTP
import TestPKI

/// A local App Store for StoreSync's tests, benchmarks and demos, and for app teams testing offline.
///
/// It serves the App Store Server API endpoints StoreSync calls (subscription statuses, transaction history,
/// consumption information, notification history) with Apple's JSON shapes, every payload signed afresh by
/// an Apple-shaped PKI of its own; it checks API tokens as Apple does; and it runs scenarios — purchases,
/// renewals, billing failures, refunds, upgrades — that change its state as the App Store would and post the
/// matching App Store Server Notifications V2 to StoreSync's ingest. Its clock moves only when a scenario
/// moves it, so every run is reproducible. Faults (429, 500, latency, lost notifications) can be injected.
///
/// A store connection trusts it when configured with `rootCertificate` instead of Apple's root.
public final class AppStoreSimulator: Sendable {
    /// The bound port, also when the configuration asked for port 0.
    public let port: UInt16
    /// The base URL to configure as the App Store Server API host (`http://127.0.0.1:PORT`).
    public let baseURL: String
    /// The root every signed payload chains to.
    public let rootCertificate: Certificate
    let core: SimulatorCore
    private let server: HTTPServer

    /// Starts listening at once.
    public init(configuration: SimulatorConfiguration) throws {
        let apps = try configuration.validated()
        let pki = try configuration.pki ?? Self.generatePKI(from: configuration.clockStart)
        let sender = try NotificationSender(target: configuration.notificationTarget,
                                            configuration: configuration.notificationClient)
        core = SimulatorCore(apps: apps, start: configuration.clockStart, transactionNumberBase: configuration.transactionNumberBase,
                             pki: pki, sender: sender)
        rootCertificate = pki.root
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
    }

    /// Stops serving (requests in flight get `grace` to finish) and closes the notification client.
    public func stop(grace: Duration = .seconds(2)) async {
        await server.stop(grace: grace)
        await core.sender.shutdown()
    }

    private static func generatePKI(from start: Date) throws -> LocalApplePKI {
        var options = LocalApplePKI.Options()
        options.validity = start.addingTimeInterval(-86_400)...start.addingTimeInterval(20 * 365 * 86_400)
        return try LocalApplePKI.generate(options)
    }

    // MARK: Root certificate

    /// PEM for configuration files and `storesync verify apple --root`; DER as Apple publishes its roots.
    public enum CertificateFormat: Sendable {
        case pem
        case der
    }

    /// Writes the root certificate for a store connection (or `storesync verify apple --root`) to trust.
    public func writeRootCertificate(to path: String, format: CertificateFormat = .pem) throws {
        let data = format == .pem ? Data(rootCertificate.pem.utf8) : rootCertificate.der
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    // MARK: Clock

    /// The simulated time: what signed payloads carry as `signedDate` and what scenarios happen at.
    public var now: Date { core.state.withLock { $0.now } }

    /// Moves the simulated clock forward by at most 100 years, and not past 2200-01-01; it never moves back.
    public func advanceClock(by duration: Duration) throws {
        try core.state.withLock { try $0.advanceClock(by: duration) }
    }

    /// Moves the simulated clock forward to `date` (an earlier date leaves it unchanged).
    public func advanceClock(to date: Date) {
        core.state.withLock { $0.advanceClock(to: date) }
    }

    // MARK: Faults

    public var faults: FaultSettings { core.faults.current }

    public func setFaults(_ settings: FaultSettings) throws {
        try core.faults.replace(settings)
    }

    /// The next `count` server-API requests answer 429 with `Retry-After` (Apple's UNIX-milliseconds form by
    /// default).
    public func rateLimitNextRequests(_ count: Int, retryAfter: Duration = .seconds(1),
                                      format: RetryAfterFormat = .unixTimeMilliseconds) throws {
        try core.faults.update {
            $0.rateLimitedRequests = count
            $0.retryAfterMilliseconds = retryAfter.wholeMilliseconds
            $0.retryAfterFormat = format
        }
    }

    /// The next `count` server-API requests answer 500 `GeneralInternalError`.
    public func failNextRequests(_ count: Int) throws {
        try core.faults.update { $0.failedRequests = count }
    }

    /// Added before every server-API answer, without holding a thread.
    public func setLatency(_ latency: Duration) throws {
        try core.faults.update { $0.latencyMilliseconds = latency.wholeMilliseconds }
    }

    /// The next `count` notifications are lost on the way (recorded in the notification history as failed).
    public func dropNextNotifications(_ count: Int) throws {
        try core.faults.update { $0.droppedNotifications = count }
    }

    // MARK: Observation

    /// Server-API requests received per endpoint, whatever they were answered.
    public var requestCounts: [SimulatorEndpoint: Int] { core.counters.snapshot }

    public func requestCount(_ endpoint: SimulatorEndpoint) -> Int { core.counters.snapshot[endpoint] ?? 0 }

    public func resetRequestCounts() { core.counters.reset() }

    /// Why recent requests were refused with 401, newest last.
    public var authenticationFailures: [String] { core.authenticationFailures.withLock { $0 } }

    /// The consumption information StoreSync sent, in arrival order.
    public var consumptionRequests: [ConsumptionRecord] { core.state.withLock { $0.consumptionRequests } }

    public func subscription(_ originalTransactionId: String) -> SimulatedSubscription? {
        core.state.withLock { $0.subscriptions[originalTransactionId] }
    }

    public func transaction(_ transactionId: String) -> SimulatedTransaction? {
        core.state.withLock { $0.transactions[transactionId] }
    }
}
