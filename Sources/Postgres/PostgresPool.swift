import Logging

/// Where and how to connect.
public struct PostgresConfiguration: Sendable {
    /// A libpq URI (`postgresql://user@host:port/db`) or key=value connection string.
    public var url: String
    /// The most connections this pool opens; budget `poolSize × processes` against `max_connections`.
    public var poolSize: Int
    /// How long a caller waits for a free connection before failing with `poolTimeout`.
    public var acquireTimeout: Duration
    public var applicationName: String
    /// Server-side limit per statement, so a stalled database fails a caller in bounded time (the webhook
    /// endpoints answer 503 rather than hang); nil keeps the server's default.
    public var statementTimeout: Duration?

    public init(url: String, poolSize: Int = 4, acquireTimeout: Duration = .seconds(10), applicationName: String = "storesync",
                statementTimeout: Duration? = nil) {
        self.url = url
        self.poolSize = poolSize
        self.acquireTimeout = acquireTimeout
        self.applicationName = applicationName
        self.statementTimeout = statementTimeout
    }
}

/// A small pool of connections, each on its own thread (see `PostgresConnection`).
///
/// Connections are opened lazily up to `poolSize`; a connection that broke is dropped on return and
/// replaced on demand. An idle connection is checked before it is lent again if it sat idle long enough
/// for the server to have gone away meanwhile.
///
/// While the database is unreachable the pool probes it on demand rather than on a timer: a caller that
/// needs a new connection then tries one itself, at most one probe runs at a time (spaced at least
/// `probeSpacing` apart, so a flood of callers cannot flood a recovering server with connection attempts),
/// and callers arriving meanwhile wait for that probe. When it succeeds they all connect at once; when it
/// fails they fail with its error. So an outage ends for callers within one probe of the server accepting
/// connections again, however long it lasted — a backoff grown during the outage would keep failing them
/// for as long again.
public actor PostgresPool {
    /// Least time between two probes of an unreachable database.
    static let probeSpacing: Duration = .milliseconds(100)
    /// An idle connection older than this is checked (without a round trip) before it is lent.
    static let idleCheckAge: Duration = .milliseconds(500)
    /// While the database stays unreachable, a warning at most this often.
    static let outageWarningInterval: Duration = .seconds(10)

    public nonisolated let configuration: PostgresConfiguration
    private var idle: [(connection: PostgresConnection, since: ContinuousClock.Instant)] = []
    private var opened = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<PostgresConnection, any Error>)] = []
    private var nextWaiterID: UInt64 = 0
    /// False from a failed connection attempt until one succeeds.
    private var reachable = true
    private var outage: (since: ContinuousClock.Instant, attempts: Int, lastWarning: ContinuousClock.Instant)?
    private var lastConnectError: PostgresError?
    private var probing = false
    private var lastProbe: ContinuousClock.Instant?
    /// Callers waiting for the running probe; resumed once it has an answer.
    private var probeWaiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var closed = false
    private let logger = Logger(component: "postgres")

    public init(_ configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    /// Lends a connection to `body` and takes it back afterwards, also when `body` throws.
    public nonisolated func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await acquire()
        do {
            let value = try await body(connection)
            await release(connection)
            return value
        } catch {
            await release(connection)
            throw error
        }
    }

    /// Runs `body` in one transaction on a pooled connection; see `PostgresConnection.transaction`.
    public nonisolated func transaction<T: Sendable>(
        _ body: @Sendable (isolated PostgresConnection) throws -> T
    ) async throws -> T {
        try await run { connection in try connection.transaction(body) }
    }

    /// Runs `body`'s statements on a pooled connection, each committing on its own: for reads that need no
    /// transaction, one round trip a statement instead of three. Unlike `withConnection`, the connection's thread is
    /// visited once: `body` and the check that the connection is still whole run together.
    public nonisolated func run<T: Sendable>(_ body: @Sendable (isolated PostgresConnection) throws -> T) async throws -> T {
        let connection = try await acquire()
        let (result, broken) = await connection.lent(body)
        await release(connection, broken: broken)
        return try result.get()
    }

    /// Runs one statement on a pooled connection.
    @discardableResult
    public nonisolated func query(_ sql: String, _ parameters: [any PostgresEncodable] = []) async throws -> PostgresRows {
        try await run { connection in try connection.query(sql, parameters) }
    }

    /// Runs one query on a pooled connection and reads its answer.
    public nonisolated func query<Value: Sendable>(_ query: PostgresQuery<Value>) async throws -> Value {
        try await run { connection in try connection.query(query) }
    }

    /// Closes idle connections and refuses new work; connections in use close when returned.
    public func close() async {
        closed = true
        for (connection, _) in idle { await connection.close() }
        idle.removeAll()
        for waiter in waiters {
            waiter.continuation.resume(throwing: PostgresError(.connectionLost, message: "pool is closed"))
        }
        waiters.removeAll()
        for waiter in probeWaiters {
            waiter.continuation.resume(throwing: PostgresError(.connectionLost, message: "pool is closed"))
        }
        probeWaiters.removeAll()
    }

    private func acquire() async throws -> PostgresConnection {
        guard !closed else { throw PostgresError(.connectionLost, message: "pool is closed") }
        while let (connection, since) = idle.popLast() {
            if ContinuousClock.now - since < Self.idleCheckAge { return connection }
            if await connection.isStillConnected() { return connection }
            opened -= 1
            await connection.close()
        }
        if opened < configuration.poolSize { return try await openConnection() }
        return try await waitForConnection()
    }

    private func openConnection() async throws -> PostgresConnection {
        opened += 1
        do {
            if !reachable { try await awaitProbe() }
            return try await connect()
        } catch {
            opened -= 1
            throw error
        }
    }

    /// Returns once a connection attempt may succeed: at once if this caller's own attempt is to be the
    /// probe, after the running probe succeeded otherwise; throws the probe's error if it failed.
    private func awaitProbe() async throws {
        if probing {
            let id = nextWaiterID
            nextWaiterID += 1
            let timeout = configuration.acquireTimeout
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.expireProbeWaiter(id)
            }
            try await withCheckedThrowingContinuation { probeWaiters.append((id, $0)) }
            return
        }
        probing = true
        if let lastProbe, ContinuousClock.now < lastProbe + Self.probeSpacing {
            try? await Task.sleep(until: lastProbe + Self.probeSpacing)
        }
        lastProbe = .now
        // This caller's own attempt (in `openConnection`) is the probe; `connect` reports its outcome.
    }

    /// One connection attempt, which also settles a running probe: a success lets every caller waiting on
    /// the probe connect, a failure fails them all.
    private func connect() async throws -> PostgresConnection {
        do {
            let connection = try await PostgresConnection.connect(url: configuration.url,
                                                                  applicationName: configuration.applicationName)
            if let timeout = configuration.statementTimeout {
                try await connection.query("SELECT set_config('statement_timeout', $1, false)", [String(timeout.milliseconds)])
            }
            markReachable()
            return connection
        } catch {
            if let error = error as? PostgresError, error.code == .connectionLost { markUnreachable(error) }
            settleProbe(with: error)
            throw error
        }
    }

    private func markReachable() {
        if let outage {
            logger.info("database reachable again", [
                "down_ms": .int(Int((ContinuousClock.now - outage.since).milliseconds)), "attempts": .int(outage.attempts),
            ])
        }
        reachable = true
        outage = nil
        settleProbe(with: nil)
    }

    private func markUnreachable(_ error: PostgresError) {
        reachable = false
        lastConnectError = error
        let now = ContinuousClock.now
        if var current = outage {
            current.attempts += 1
            if now - current.lastWarning >= Self.outageWarningInterval {
                current.lastWarning = now
                logger.warning("database still unreachable", [
                    "error": .string(error.message), "down_ms": .int(Int((now - current.since).milliseconds)),
                    "attempts": .int(current.attempts),
                ])
            }
            outage = current
        } else {
            outage = (now, 1, now)
            logger.warning("database connection failed; probing it on demand", ["error": .string(error.message)])
        }
    }

    private func settleProbe(with error: (any Error)?) {
        guard probing else { return }
        probing = false
        let waiting = probeWaiters
        probeWaiters.removeAll()
        for waiter in waiting {
            if let error { waiter.continuation.resume(throwing: error) } else { waiter.continuation.resume() }
        }
    }

    /// A caller waits for a probe no longer than for a free connection (a probe of a host that does not answer
    /// takes libpq's connect timeout).
    private func expireProbeWaiter(_ id: UInt64) {
        guard let index = probeWaiters.firstIndex(where: { $0.id == id }) else { return }
        probeWaiters.remove(at: index).continuation.resume(throwing: lastConnectError ?? PostgresError(
            .connectionLost, message: "database unreachable; no probe succeeded within \(configuration.acquireTimeout)"))
    }

    private func waitForConnection() async throws -> PostgresConnection {
        let id = nextWaiterID
        nextWaiterID += 1
        let timeout = configuration.acquireTimeout
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.expireWaiter(id)
        }
        return try await withCheckedThrowingContinuation { continuation in
            waiters.append((id, continuation))
        }
    }

    private func expireWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiters.remove(at: index)
        waiter.continuation.resume(throwing: PostgresError(
            .poolTimeout, message: "no database connection free within \(configuration.acquireTimeout)"))
    }

    private func release(_ connection: PostgresConnection) async {
        await release(connection, broken: await connection.isBroken)
    }

    /// Takes back a connection whose `broken` state its borrower read.
    private func release(_ connection: PostgresConnection, broken: Bool) async {
        if closed {
            await connection.close()
            opened -= 1
            return
        }
        if broken {
            opened -= 1
            if !waiters.isEmpty { Task { await self.replaceForWaiter() } }
            return
        }
        if !waiters.isEmpty {
            waiters.removeFirst().continuation.resume(returning: connection)
        } else {
            idle.append((connection, .now))
        }
    }

    private func replaceForWaiter() async {
        guard !waiters.isEmpty, opened < configuration.poolSize else { return }
        do {
            let connection = try await openConnection()
            if waiters.isEmpty { idle.append((connection, .now)) } else {
                waiters.removeFirst().continuation.resume(returning: connection)
            }
        } catch {
            if !waiters.isEmpty { waiters.removeFirst().continuation.resume(throwing: error) }
        }
    }
}
