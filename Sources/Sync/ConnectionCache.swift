import Accounts
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

    /// What was built for exactly this connection (same settings revision), if anything.
    func cached(for connection: StoreConnection) -> Value? {
        entries.withLock { entries in
            entries[connection.id].flatMap { $0.connection == connection ? $0.value : nil }
        }
    }

    /// Built under the lock (a few milliseconds of key and certificate parsing, once per connection): two jobs
    /// racing to build would otherwise leave two clients, each with its own token and rate budget. A job still
    /// holding an older revision than the one cached gets tools of its own for its run, and leaves the newer
    /// ones in place.
    func value(for connection: StoreConnection, build: (StoreConnection) throws -> Value) throws -> Value {
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

    /// The failure of a job whose connection changed (or went away) between reading it and reading its
    /// credentials: retried, its next attempt reads both again.
    static func changed(_ connection: StoreConnection) -> JobFailure {
        .retryable("store connection \(connection.id) changed while the job read it; the next attempt reads it again")
    }
}
