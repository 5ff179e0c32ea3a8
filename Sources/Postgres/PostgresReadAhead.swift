/// Statements a transaction's later work begins with — a lock and the read it guards — sent ahead of that work,
/// together with other work's, in one round trip.
///
/// A group commit writes many jobs in one transaction, and each job's writes began with a round trip of their own
/// for their lineage's lock and what the mirror knew under it. Sent ahead for the whole batch at once, those
/// answers wait on the connection (`keep`) until the job's writes ask for them (`takeAnswers`), and each job's
/// writes skip that round trip. Whoever sends them ahead must make sure nothing the transaction does in between
/// can change their answers (the work of other keys only, never the same key's).
public struct PostgresReadAhead: Sendable {
    /// What the answers are kept under: the work that will ask for them names it.
    public let key: String
    public let statements: [PostgresStatement]

    public init(key: String, statements: [PostgresStatement]) {
        self.key = key
        self.statements = statements
    }
}

/// The answers of read-aheads sent in the current transaction, each to be taken once.
struct ReadAheadAnswers {
    private var kept: [String: (sql: [String], rows: [PostgresRows])] = [:]

    mutating func keep(_ readAhead: PostgresReadAhead, answers: [PostgresRows]) {
        kept[readAhead.key] = (readAhead.statements.map(\.sql), answers)
    }

    mutating func take(key: String, sql: [String]) -> [PostgresRows]? {
        guard let answers = kept.removeValue(forKey: key), answers.sql == sql else { return nil }
        return answers.rows
    }

    mutating func forget() { kept.removeAll() }
}

extension PostgresConnection {
    /// Keeps `answers`, the rows of `readAhead`'s statements run a moment ago in this transaction, for the work that
    /// asks for them by `takeAnswers`. Outside a transaction nothing is kept: the answers could be stale by then.
    public func keep(_ readAhead: PostgresReadAhead, answers: [PostgresRows]) {
        guard isInTransaction, answers.count == readAhead.statements.count else { return }
        readAheads.keep(readAhead, answers: answers)
    }

    /// The answers kept for `key`, if they are those of exactly `statements` (by their SQL; `key` names their
    /// parameters); nil otherwise, and the caller runs them itself. Each answer is taken once, and none outlives
    /// its transaction or a scope of it that failed (a rolled-back savepoint releases locks taken in it).
    public func takeAnswers(to statements: [PostgresStatement], key: String) -> [PostgresRows]? {
        readAheads.take(key: key, sql: statements.map(\.sql))
    }
}
