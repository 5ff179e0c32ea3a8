/// Which statements one connection has prepared on the server, by their SQL text.
///
/// Names are never reused: a statement forgotten after a schema change is prepared again under a new name,
/// because the old one stays allocated on the server until the connection is next outside a transaction.
struct StatementCache {
    /// Enough for every statement the daemon runs; dynamic SQL beyond it runs unprepared.
    static let capacity = 512

    private var names: [String: String] = [:]
    private var nextNumber = 0

    func name(for sql: String) -> String? { names[sql] }

    /// Records `sql` under a fresh name, or returns nil when the cache is full.
    mutating func add(_ sql: String) -> String? {
        guard names.count < Self.capacity else { return nil }
        nextNumber += 1
        let name = "storesync_\(nextNumber)"
        names[sql] = name
        return name
    }

    mutating func forget(_ sql: String) {
        names[sql] = nil
    }
}
