/// A connection's bookkeeping of transaction scopes and deferred statements, apart from its I/O, as postgres-nio
/// keeps its protocol state machines: `PostgresConnection` tells it what it is about to do and what the server
/// answered, and acts on what it answers — which statements to send, which scope to roll back and how. Pure, so
/// the rules (an opening travels with the scope's first statement; only a scope whose opening ran is rolled
/// back; a scope that never reached the server is forgotten) are tested without a server.
struct TransactionStateMachine {
    /// One `transaction` call: the top-level transaction (depth 0) or a savepoint inside it.
    struct Scope: Equatable {
        /// Tags the scope's opening statement among the pending ones.
        let token: Int
        /// How many scopes enclose this one.
        let depth: Int

        /// The savepoint's name; nil for the top-level transaction.
        var savepoint: String? { depth == 0 ? nil : "sp\(depth)" }
    }

    /// A statement waiting for the next round trip; `opening` tags the `BEGIN` or `SAVEPOINT` of a scope.
    struct Pending {
        let statement: PostgresStatement
        var opening: Int?
    }

    /// What to send when a scope's body failed.
    enum Rollback: Equatable {
        /// Nothing: the scope had already ended, never reached the server (forgotten, with what it deferred), or
        /// its opening was sent but never ran — what failed came before it, and belongs to the enclosing scope.
        case none
        /// The scope's opening ran: roll it back with these statements (what was still deferred is dropped).
        case send([String])
    }

    /// How many scopes are open.
    private(set) var depth = 0
    /// Statements deferred by `queryLater` and scope openings, not yet sent.
    private var pending: [Pending] = []
    /// Scopes whose opening statement ran, by token: only those may be rolled back to.
    private var opened: Set<Int> = []
    private var lastOpening = 0
    /// Names of forgotten statements still prepared on the server, deallocated outside any transaction.
    private var unusedStatements: [String] = []

    var hasPending: Bool { !pending.isEmpty }

    /// Opens a scope; its opening waits for the scope's first statement.
    mutating func begin() -> Scope {
        lastOpening += 1
        let scope = Scope(token: lastOpening, depth: depth)
        pending.append(Pending(statement: PostgresStatement(scope.savepoint.map { "SAVEPOINT \($0)" } ?? "BEGIN"),
                               opening: scope.token))
        depth += 1
        return scope
    }

    /// Defers `statement` to the next round trip; false outside a transaction, where it must run at once.
    mutating func later(_ statement: PostgresStatement) -> Bool {
        guard depth > 0 else { return false }
        pending.append(Pending(statement: statement))
        return true
    }

    /// What one pipeline sends: everything pending, then `statements`. Pending is empty afterwards.
    mutating func batch(_ statements: [PostgresStatement]) -> [Pending] {
        defer { pending.removeAll() }
        return pending + statements.map { Pending(statement: $0) }
    }

    /// `item` of a batch ran: if it opened a scope, that scope can be rolled back to now.
    mutating func ran(_ item: Pending) {
        if let opening = item.opening { opened.insert(opening) }
    }

    /// The statement that ends `scope` successfully.
    func closing(_ scope: Scope) -> String {
        scope.savepoint.map { "RELEASE SAVEPOINT \($0)" } ?? "COMMIT"
    }

    /// `scope`'s closing statement ran.
    mutating func closed(_ scope: Scope) {
        opened.remove(scope.token)
        depth = scope.depth
    }

    /// `scope`'s body, or its closing, threw; the scope is closed afterwards.
    mutating func failed(_ scope: Scope) -> Rollback {
        guard depth != scope.depth else { return .none }
        depth = scope.depth
        if let unsent = pending.firstIndex(where: { $0.opening == scope.token }) {
            // Nothing of this scope reached the server: forget it, keeping what came before.
            pending.removeSubrange(unsent...)
            return .none
        }
        guard opened.remove(scope.token) != nil else { return .none }
        pending.removeAll()
        // Released after the rollback, so a later sibling's name can never resolve to this one.
        return .send(scope.savepoint.map { ["ROLLBACK TO SAVEPOINT \($0)", "RELEASE SAVEPOINT \($0)"] } ?? ["ROLLBACK"])
    }

    /// Prepared statement `name` is no longer used; it is deallocated once outside any transaction.
    mutating func retire(_ name: String) {
        unusedStatements.append(name)
    }

    /// The retired statements to deallocate now: none inside a transaction, where a failure would abort it.
    mutating func statementsToDeallocate() -> [String] {
        guard depth == 0 else { return [] }
        defer { unusedStatements.removeAll() }
        return unusedStatements
    }
}
