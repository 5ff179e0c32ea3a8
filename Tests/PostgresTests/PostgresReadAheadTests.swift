import Foundation
import Postgres
import Testing
import TestSupport

/// Guards what a connection keeps of read-aheads (`PostgresReadAhead`): answers are taken once, only for the very
/// statements they answer, never outside their transaction, and never after a scope of it failed.
@Suite("Postgres read-aheads")
struct PostgresReadAheadTests {
    private static let readAhead = PostgresReadAhead(key: "k", statements: [PostgresStatement("SELECT $1::text", ["ahead"])])

    /// Runs the read-ahead's statements on `db` and keeps their answers.
    private static func sendAhead(on db: isolated PostgresConnection) throws {
        db.keep(readAhead, answers: try db.query(readAhead.statements))
    }

    private static func taken(on db: isolated PostgresConnection, key: String = "k",
                              sql: String = "SELECT $1::text") throws -> String? {
        try db.takeAnswers(to: [PostgresStatement(sql, ["asked"])], key: key)?[0][0].decode(0)
    }

    @Test("kept answers are taken once, by the key and the statements they answer")
    func takenOnce() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let taken = try await db.pool.transaction { db -> [String?] in
                try Self.sendAhead(on: db)
                let otherKey = try Self.taken(on: db, key: "other")
                let otherSQL = try Self.taken(on: db, sql: "SELECT $1::varchar")
                // A mismatch spends the answers: whoever asked runs its statements itself.
                try Self.sendAhead(on: db)
                return [otherKey, otherSQL, try Self.taken(on: db), try Self.taken(on: db)]
            }
            #expect(taken == [nil, nil, "ahead", nil])
        }
    }

    @Test("answers are not kept outside a transaction, nor past its end")
    func scopedToTheTransaction() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let outside = try await db.pool.run { db in
                try Self.sendAhead(on: db)
                return try Self.taken(on: db)
            }
            #expect(outside == nil)
            try await db.pool.transaction { db in try Self.sendAhead(on: db) }
            let later = try await db.pool.transaction { db in try Self.taken(on: db) }
            #expect(later == nil)
        }
    }

    @Test("a failed savepoint forgets every kept answer: the locks a read-ahead took may have gone with it")
    func forgottenWhenAScopeFails() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let taken = try await db.pool.transaction { db -> String? in
                try Self.sendAhead(on: db)
                _ = try? db.transaction { db in
                    try db.query("SELECT 1")
                    throw CancellationError()
                }
                return try Self.taken(on: db)
            }
            #expect(taken == nil)
        }
    }
}
