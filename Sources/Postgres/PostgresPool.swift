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
/// replaced on demand, with capped, jittered backoff between failed connection attempts.
public actor PostgresPool {
    public nonisolated let configuration: PostgresConfiguration
    private var idle: [PostgresConnection] = []
    private var opened = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<PostgresConnection, any Error>)] = []
    private var nextWaiterID: UInt64 = 0
    private var backoff = ReconnectBackoff()
    private var retryNotBefore: ContinuousClock.Instant?
    private var lastConnectError: PostgresError?
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
        try await withConnection { connection in try await connection.transaction(body) }
    }

    /// Runs `body`'s statements, each autocommitted, on a pooled connection; see `PostgresConnection.run`.
    public nonisolated func run<T: Sendable>(_ body: @Sendable (isolated PostgresConnection) throws -> T) async throws -> T {
        try await withConnection { connection in try await connection.run(body) }
    }

    /// Runs one statement on a pooled connection.
    @discardableResult
    public nonisolated func query(_ sql: String, _ parameters: [any PostgresEncodable] = []) async throws -> PostgresRows {
        try await withConnection { connection in try await connection.query(sql, parameters) }
    }

    /// Runs one query on a pooled connection and reads its answer.
    public nonisolated func query<Value: Sendable>(_ query: PostgresQuery<Value>) async throws -> Value {
        try await run { connection in try connection.query(query) }
    }

    /// Closes idle connections and refuses new work; connections in use close when returned.
    public func close() async {
        closed = true
        for connection in idle { await connection.close() }
        idle.removeAll()
        for waiter in waiters {
            waiter.continuation.resume(throwing: PostgresError(.connectionLost, message: "pool is closed"))
        }
        waiters.removeAll()
    }

    private func acquire() async throws -> PostgresConnection {
        guard !closed else { throw PostgresError(.connectionLost, message: "pool is closed") }
        if let connection = idle.popLast() { return connection }
        if opened < configuration.poolSize { return try await openConnection() }
        return try await waitForConnection()
    }

    private func openConnection() async throws -> PostgresConnection {
        opened += 1
        do {
            if let notBefore = retryNotBefore, notBefore > .now {
                let wait = notBefore - .now
                guard wait < configuration.acquireTimeout else {
                    throw lastConnectError ?? PostgresError(.connectionLost, message: "database unreachable")
                }
                try await Task.sleep(until: notBefore)
            }
            let connection = try await PostgresConnection.connect(
                url: configuration.url, applicationName: configuration.applicationName)
            if let timeout = configuration.statementTimeout {
                try await connection.query("SELECT set_config('statement_timeout', $1, false)", [String(timeout.milliseconds)])
            }
            backoff.recordSuccess()
            retryNotBefore = nil
            return connection
        } catch {
            opened -= 1
            if let error = error as? PostgresError, error.code == .connectionLost {
                let delay = backoff.recordFailure()
                retryNotBefore = .now + delay
                lastConnectError = error
                logger.warning("database connection failed", [
                    "error": .string(error.message), "retry_in_ms": .int(Int(delay.milliseconds)),
                ])
            }
            throw error
        }
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
        if closed {
            await connection.close()
            opened -= 1
            return
        }
        if await connection.isBroken {
            opened -= 1
            if !waiters.isEmpty { Task { await self.replaceForWaiter() } }
            return
        }
        if !waiters.isEmpty {
            waiters.removeFirst().continuation.resume(returning: connection)
        } else {
            idle.append(connection)
        }
    }

    private func replaceForWaiter() async {
        guard !waiters.isEmpty, opened < configuration.poolSize else { return }
        do {
            let connection = try await openConnection()
            if waiters.isEmpty { idle.append(connection) } else {
                waiters.removeFirst().continuation.resume(returning: connection)
            }
        } catch {
            if !waiters.isEmpty { waiters.removeFirst().continuation.resume(throwing: error) }
        }
    }
}
