import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport

// Small tools shared by the Postgres suites: bounded waits, a gate to hold tasks, and shortcuts for
// one-value queries. Nothing here fakes the database.

/// The error a test body throws on purpose, to check what a rollback or cleanup does with it.
struct Boom: Error, Equatable {}

/// A test's own failure with a message that says what it was waiting for.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A name no other test (or earlier run) uses, for application names and channels.
func uniqueName(_ prefix: String) -> String {
    "\(prefix)-\(UInt32.random(in: 0...UInt32.max))"
}

/// Runs `body` on a direct connection to a fresh database holding an empty `notes (id int PRIMARY KEY)`
/// table, and returns the note ids committed by the end, as another session sees them.
func notesCommitted(by body: (PostgresConnection) async throws -> Void) async throws -> [Int] {
    try await TestDatabase.with(poolSize: 1) { db in
        try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
        try await withDirectConnection(db.url, body)
        return try await db.pool.noteIDs()
    }
}

/// Runs `body` and fails with a message naming `what` if it has not finished within `timeout`.
/// Never hangs: on timeout `body` is cancelled and abandoned rather than awaited.
func withTimeout<T: Sendable>(_ what: String, within timeout: Duration = .seconds(20),
                              _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let claim = Claim()
    let work = Task { try await body() }
    return try await withCheckedThrowingContinuation { continuation in
        let timer = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled, claim.take() else { return }
            work.cancel()
            continuation.resume(throwing: TestFailure("timed out after \(timeout) waiting for \(what)"))
        }
        Task {
            let result = await work.result
            timer.cancel()
            if claim.take() { continuation.resume(with: result) }
        }
    }
}

/// The next element of `stream`, or a failure naming `what` when none arrives within `timeout`.
/// Call it from one task at a time (AsyncStream allows a single waiting consumer).
func nextElement<Element: Sendable>(of stream: AsyncStream<Element>, within timeout: Duration = .seconds(20),
                                    _ what: String) async throws -> Element {
    let element = try await withTimeout(what, within: timeout) { () async -> Element? in
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
    guard let element else { throw TestFailure("the stream ended while waiting for \(what)") }
    return element
}

/// Terminates `stream` from the consumer side, which stops its producer (`onTermination`).
func cancelStream<Element: Sendable>(_ stream: AsyncStream<Element>) async {
    let consumer = Task { for await _ in stream {} }
    consumer.cancel()
    await consumer.value
}

/// Holds any number of tasks until `open()`. A waiting task that is cancelled stops waiting with
/// `CancellationError`, so a failing test never leaves a task group stuck behind a closed gate.
actor Gate {
    private var isOpen = false
    private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var nextID = 0

    func wait() async throws {
        if isOpen { return }
        let id = nextID
        nextID += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if isOpen {
                    continuation.resume()
                } else if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    func open() {
        isOpen = true
        for waiter in waiters.values { waiter.resume() }
        waiters.removeAll()
    }

    private func cancelWaiter(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }
}

/// A thread-safe flag that can be taken exactly once.
final class Claim: Sendable {
    private let taken = Mutex(false)

    /// True for the first caller only.
    func take() -> Bool {
        taken.withLock { taken in
            defer { taken = true }
            return !taken
        }
    }
}

/// A thread-safe count of holders that remembers its high-water mark.
final class Tally: Sendable {
    private let state = Mutex((current: 0, peak: 0, total: 0))

    func enter() {
        state.withLock { state in
            state.current += 1
            state.total += 1
            state.peak = max(state.peak, state.current)
        }
    }

    func leave() { state.withLock { $0.current -= 1 } }

    var current: Int { state.withLock { $0.current } }
    var peak: Int { state.withLock { $0.peak } }
    var total: Int { state.withLock { $0.total } }
}

extension PostgresPool {
    /// The first column of the first row of `sql`, decoded.
    nonisolated func scalar<T: PostgresDecodable & Sendable>(
        _ sql: String, _ parameters: [any PostgresEncodable] = [], as type: T.Type = T.self
    ) async throws -> T {
        let rows = try await query(sql, parameters)
        guard let row = rows.first else { throw TestFailure("no row from: \(sql)") }
        return try row.decode(0, as: T.self)
    }

    /// The ids in the `notes` table the transaction tests write to, in order.
    nonisolated func noteIDs() async throws -> [Int] {
        try await query("SELECT id FROM notes ORDER BY id").map { try $0.decode(0, as: Int.self) }
    }

    /// How many server backends currently carry `applicationName`.
    nonisolated func backendCount(applicationName: String) async throws -> Int {
        try await scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", [applicationName])
    }
}

extension PostgresConnection {
    /// The first column of the first row of `sql`, decoded.
    func scalar<T: PostgresDecodable & Sendable>(
        _ sql: String, _ parameters: [any PostgresEncodable] = [], as type: T.Type = T.self
    ) throws -> T {
        let rows = try query(sql, parameters)
        guard let row = rows.first else { throw TestFailure("no row from: \(sql)") }
        return try row.decode(0, as: T.self)
    }

    /// How many statements with exactly the text `sql` this connection has prepared.
    func preparedCount(of sql: String) throws -> Int {
        try scalar("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", [sql])
    }

    /// Creates `shapes (id int)` with one row, prepares `select` on it, then adds a column under the prepared
    /// statement: its next run finds it stale.
    func addColumnUnderPreparedStatement(_ select: String) throws {
        try query("CREATE TABLE shapes (id int)")
        try query("INSERT INTO shapes VALUES (1)")
        guard try query(select, [1]).columns == ["id"] else { throw TestFailure("\(select) did not read shapes") }
        try query("ALTER TABLE shapes ADD COLUMN name text DEFAULT 'x'")
    }

    /// The server process serving this connection.
    func backendPID() throws -> Int32 {
        try scalar("SELECT pg_backend_pid()")
    }
}

/// Opens a connection of its own (outside any pool), lends it to `body`, and closes it afterwards.
func withDirectConnection<T>(_ url: String, applicationName: String = "storesync-tests",
                             _ body: (PostgresConnection) async throws -> T) async throws -> T {
    let connection = try await PostgresConnection.connect(url: url, applicationName: applicationName)
    do {
        let value = try await body(connection)
        await connection.close()
        return value
    } catch {
        await connection.close()
        throw error
    }
}

/// Terminates the backend `pid` through `pool` and waits (bounded, server side) until it has exited.
func terminateBackend(_ pid: Int32, using pool: PostgresPool) async throws {
    let terminated: Bool = try await pool.scalar("SELECT pg_terminate_backend($1, 10000)", [pid])
    guard terminated else { throw TestFailure("backend \(pid) did not exit within 10 s of pg_terminate_backend") }
}
