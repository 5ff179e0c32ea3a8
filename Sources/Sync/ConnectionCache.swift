import Mirror
import Synchronization

/// What a worker keeps per store connection across jobs — verifiers with their chain caches, API clients
/// with their tokens and rate limiters — rebuilt when the connection's settings change.
final class ConnectionCache<Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        let connection: StoreConnection
        let value: Value
    }

    private let entries = Mutex<[Int64: Entry]>([:])

    func value(for connection: StoreConnection, build: (StoreConnection) throws -> Value) throws -> Value {
        if let entry = entries.withLock({ $0[connection.id] }), entry.connection == connection { return entry.value }
        let value = try build(connection)
        entries.withLock { $0[connection.id] = Entry(connection: connection, value: value) }
        return value
    }
}
