import Foundation

/// The service's HTTP(S) server (store webhooks, health, metrics) on libmicrohttpd.
///
/// libmicrohttpd accepts, parses and writes on its own polling thread; each routed request runs its handler
/// as a Swift task while the connection is suspended, so handlers may await the database or other services
/// without stalling other connections. Request bodies are capped (`maxBodyBytes`) before any handler runs.
public final class HTTPServer: Sendable {
    private enum Lifecycle: Sendable {
        case running(MHDDaemon)
        case stopping
        case stopped
    }

    /// The bound port, also when the configuration asked for port 0.
    public let port: UInt16
    private let core: ServerCore
    private let lifecycle: Locked<Lifecycle>

    /// Starts listening at once; throws `HTTPServerError` when the daemon cannot start.
    public init(configuration: HTTPServerConfiguration, router: HTTPRouter) throws {
        guard configuration.maxBodyBytes >= 0, configuration.maxConnections >= 1,
              (configuration.maxConnectionsPerClient ?? 1) >= 1, configuration.bodyTimeout > .zero else {
            throw HTTPServerError(.invalidConfiguration,
                                  "maxBodyBytes must be ≥ 0, maxConnections and maxConnectionsPerClient ≥ 1, bodyTimeout > 0")
        }
        core = ServerCore(router: router, configuration: configuration)
        let daemon = try MHDDaemon(configuration: configuration, core: core)
        port = daemon.port
        lifecycle = Locked(.running(daemon))
    }

    /// Requests received and not yet finished (response sent, or the client gone): what a graceful stop
    /// waits for.
    public var requestsInFlight: Int { core.inFlight.load(ordering: .relaxed) }

    /// Connections accepted since start. With keep-alive this grows far slower than the request count;
    /// exposed for metrics and for tests of connection reuse.
    public var connectionsAccepted: Int { core.connectionsAccepted.load(ordering: .relaxed) }

    /// Graceful stop: stop accepting new connections at once, let requests in flight finish (up to `grace`),
    /// then stop.
    ///
    /// New connection attempts are refused from the first moment; responses sent while draining carry
    /// `Connection: close`. Requests still unanswered when `grace` runs out (or when the calling task is
    /// cancelled) have their connections closed; their handlers run on, but their responses are dropped.
    /// Concurrent and repeated calls return once the server has stopped.
    public func stop(grace: Duration) async {
        let daemon: MHDDaemon? = lifecycle.withLock { lifecycle in
            guard case .running(let daemon) = lifecycle else { return nil }
            lifecycle = .stopping
            return daemon
        }
        guard let daemon else {
            while case .stopping = lifecycle.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
            return
        }
        core.draining.store(true, ordering: .relaxed)
        daemon.quiesce()
        let deadline = ContinuousClock.now + grace
        while core.inFlight.load(ordering: .relaxed) > 0, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
        // MHD_stop_daemon joins libmicrohttpd's thread: wait for it on a thread of its own, not the pool's.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                daemon.stop()
                done.resume()
            }.start()
        }
        lifecycle.withLock { $0 = .stopped }
    }
}
