import Accounts
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
    /// racing to build would otherwise leave two clients, each with its own token and rate budget.
    func value(for connection: StoreConnection, build: (StoreConnection) throws -> Value) throws -> Value {
        try entries.withLock { entries in
            if let entry = entries[connection.id], entry.connection == connection { return entry.value }
            let value = try build(connection)
            entries[connection.id] = Entry(connection: connection, value: value)
            return value
        }
    }
}
