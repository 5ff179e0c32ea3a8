import Accounts
import Postgres
import Queue
import Synchronization

/// What a worker keeps per store connection across jobs — verifiers with their chain caches, API clients
/// with their tokens and rate limiters — rebuilt when the connection's settings change.
final class ConnectionCache<Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        let connection: StoreConnection
        let value: Value
    }

    private let entries = Mutex<[Int64: Entry]>([:])

    /// What was built for exactly this connection (same settings revision); else built from its credentials,
    /// read by `credentials` at that revision. A connection changed (or gone) since the job read it fails the
    /// job, to be retried: its next attempt reads both again.
    func value<Credentials: Sendable>(for connection: StoreConnection, credentials: PostgresQuery<Credentials?>,
                                      pool: PostgresPool,
                                      build: (StoreConnection, Credentials) throws -> Value) async throws -> Value {
        let cached = entries.withLock { entries in
            entries[connection.id].flatMap { $0.connection == connection ? $0.value : nil }
        }
        if let cached { return cached }
        guard let loaded = try await pool.query(credentials) else {
            throw JobFailure.retryable("store connection \(connection.id) changed while the job read it; the next attempt "
                                       + "reads it again")
        }
        return try value(for: connection) { try build($0, loaded) }
    }

    /// Built under the lock (a few milliseconds of key and certificate parsing, once per connection): two jobs
    /// racing to build would otherwise leave two clients, each with its own token and rate budget. A job still
    /// holding an older revision than the one cached gets tools of its own for its run, and leaves the newer
    /// ones in place.
    private func value(for connection: StoreConnection, build: (StoreConnection) throws -> Value) throws -> Value {
        try entries.withLock { entries in
            if let entry = entries[connection.id] {
                if entry.connection == connection { return entry.value }
                if entry.connection.settingsRevision > connection.settingsRevision { return try build(connection) }
            }
            let value = try build(connection)
            entries[connection.id] = Entry(connection: connection, value: value)
            return value
        }
    }
}
