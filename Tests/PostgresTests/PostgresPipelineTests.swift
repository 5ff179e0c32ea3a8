import Foundation
import Postgres
import Testing
import TestSupport

/// Guards the round trips a connection saves: several statements sent together (`query(_:)` with an array),
/// statements deferred with `queryLater`, and transaction openings that travel with the first statement.
/// Whatever is batched must behave exactly as if each statement had run on its own, failures included.
@Suite("Postgres pipelining")
struct PostgresPipelineTests {
    @Test("statements sent together run in order, each seeing the ones before it, and answer in order")
    func batchRunsInOrder() async throws {
        _ = try await notesCommitted { connection in
            let results = try await connection.query([
                PostgresStatement("INSERT INTO notes VALUES ($1) RETURNING id", [7]),
                PostgresStatement("SELECT count(*) FROM notes WHERE id = $1", [7]),
                PostgresStatement("SELECT 'no parameters'"),
            ])
            #expect(results.count == 3)
            #expect(try results[0][0].decode(0, as: Int.self) == 7)
            #expect(try results[1][0].decode(0, as: Int.self) == 1)
            #expect(try results[2][0].decode(0, as: String.self) == "no parameters")
        }
    }

    @Test("outside a transaction a batch is atomic: a failure throws it and undoes the statements before it")
    func batchFailureIsAtomic() async throws {
        let ids = try await notesCommitted { connection in
            let error = await #expect(throws: PostgresError.self) {
                try await connection.query([
                    PostgresStatement("INSERT INTO notes VALUES ($1)", [1]),
                    PostgresStatement("INSERT INTO notes VALUES ($1)", [1]),
                    PostgresStatement("INSERT INTO notes VALUES ($1)", [2]),
                ])
            }
            #expect(error?.code == .uniqueViolation)
            // The connection is in step afterwards.
            try await connection.query([PostgresStatement("INSERT INTO notes VALUES ($1)", [3])])
        }
        #expect(ids == [3])
    }

    @Test("a deferred statement is visible to the next one and commits with its transaction")
    func deferredStatementRunsBeforeTheNext() async throws {
        let ids = try await notesCommitted { connection in
            let seen = try await connection.transaction { @Sendable connection in
                try connection.queryLater("INSERT INTO notes VALUES ($1)", [1])
                let count: Int = try connection.query("SELECT count(*) FROM notes")[0].decode(0)
                try connection.queryLater("INSERT INTO notes VALUES ($1)", [2])
                return count
            }
            #expect(seen == 1)
        }
        #expect(ids == [1, 2], "the statement deferred last went with COMMIT")
    }

    @Test("a deferred statement that fails fails its savepoint only, when the savepoint ends")
    func deferredFailureFailsItsSavepoint() async throws {
        let ids = try await notesCommitted { connection in
            try await connection.transaction { @Sendable connection in
                try connection.query("INSERT INTO notes VALUES (1)")
                let error = #expect(throws: PostgresError.self) {
                    try connection.transaction { connection in
                        try connection.queryLater("INSERT INTO notes VALUES ($1)", [2])
                        try connection.queryLater("INSERT INTO notes VALUES ($1)", [1])
                    }
                }
                #expect(error?.code == .uniqueViolation)
                try connection.query("INSERT INTO notes VALUES (3)")
            }
            // Outside a transaction nothing is deferred: the failure is thrown at once.
            await #expect(throws: PostgresError.self) { try await connection.queryLater("INSERT INTO notes VALUES ($1)", [3]) }
        }
        #expect(ids == [1, 3])
    }

    @Test("a deferred statement's failure is thrown by the next statement, not where it was queued")
    func deferredFailureSurfacesLater() async throws {
        let ids = try await notesCommitted { connection in
            try await connection.query("INSERT INTO notes VALUES (1)")
            await #expect(throws: PostgresError.self) {
                try await connection.transaction { @Sendable connection in
                    try connection.queryLater("INSERT INTO notes VALUES ($1)", [1])
                    let error = #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
                    #expect(error?.code == .uniqueViolation)
                }
            }
            // At the top level the failure comes with COMMIT, and nothing of the transaction is kept.
            let error = await #expect(throws: PostgresError.self) {
                try await connection.transaction { @Sendable connection in
                    try connection.query("INSERT INTO notes VALUES (2)")
                    try connection.queryLater("INSERT INTO notes VALUES ($1)", [1])
                }
            }
            #expect(error?.code == .uniqueViolation)
        }
        #expect(ids == [1])
    }

    @Test("a savepoint that throws before reaching the server is never sent; what was deferred before it still runs")
    func unsentSavepointIsDropped() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
            // nextval is not undone by a rollback: the sequence shows whether the deferred call was ever sent.
            try await db.pool.query("CREATE SEQUENCE probe")
            try await withDirectConnection(db.url) { connection in
                try await connection.transaction { @Sendable connection in
                    try connection.queryLater("INSERT INTO notes VALUES ($1)", [1])
                    #expect(throws: Boom.self) {
                        try connection.transaction { connection in
                            try connection.queryLater("SELECT nextval($1)", ["probe"])
                            throw Boom()
                        }
                    }
                }
            }
            let ids = try await db.pool.noteIDs()
            #expect(ids == [1])
            let called: Bool = try await db.pool.query("SELECT is_called FROM probe")[0].decode(0)
            #expect(!called)
        }
    }

    @Test("a failure before a savepoint's opening ran belongs to the enclosing transaction: no rollback to an older savepoint hides it")
    func failureBeforeTheOpeningFailsTheEnclosingTransaction() async throws {
        let ids = try await notesCommitted { connection in
            _ = await #expect(throws: PostgresError.self) {
                try await connection.transaction { @Sendable connection in
                    // A sibling rolled back, then one kept: both used the name sp1.
                    #expect(throws: Boom.self) {
                        try connection.transaction { connection in
                            try connection.query("INSERT INTO notes VALUES (1)")
                            throw Boom()
                        }
                    }
                    _ = try connection.transaction { connection in try connection.query("INSERT INTO notes VALUES (2)") }
                    // The enclosing transaction's own deferred write fails in the pipeline that opens the next one.
                    try connection.queryLater("INSERT INTO notes VALUES ($1)", [2])
                    let error = #expect(throws: PostgresError.self) {
                        _ = try connection.transaction { connection in try connection.query("INSERT INTO notes VALUES (3)") }
                    }
                    #expect(error?.code == .uniqueViolation)
                }
            }
        }
        #expect(ids.isEmpty, "the transaction failed as a whole instead of committing without the kept savepoint's row")
    }

    @Test("typed queries sent together come back each read its own way")
    func typedQueries() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await withDirectConnection(db.url) { connection in
                let (number, words, nothing) = try await connection.transaction { @Sendable connection in
                    try connection.query(
                        PostgresQuery("SELECT $1::int8 * 2", [Int64(21)]) { try $0[0].decode(0, as: Int64.self) },
                        PostgresQuery("SELECT unnest($1::text[])", [PostgresArray(["a", "b"])]) {
                            try $0.map { try $0.decode(0, as: String.self) }
                        },
                        PostgresQuery("SELECT 1 WHERE false") { $0.isEmpty })
                }
                #expect(number == 42)
                #expect(words == ["a", "b"])
                #expect(nothing)
            }
        }
    }

    @Test("a statement first run inside a pipeline is prepared there, once, and run by name afterwards")
    func preparedInsidePipeline() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let add = "SELECT $1::int8 + 1"
            try await withDirectConnection(db.url) { connection in
                for value in [Int64(1), 2, 3] {
                    // Inside a transaction the statement always travels with BEGIN, so through the pipeline.
                    let sum: Int64 = try await connection.transaction { @Sendable connection in
                        try connection.query(add, [value])[0].decode(0)
                    }
                    #expect(sum == value + 1)
                }
                let prepared = try await connection.preparedCount(of: add)
                #expect(prepared == 1)
            }
        }
    }

    @Test("a statement that cannot be prepared inside a batch fails only its savepoint, and is prepared once it can be")
    func preparationFailureInsideBatch() async throws {
        let select = "SELECT count(*) FROM later WHERE id > $1"
        let ids = try await notesCommitted { connection in
            try await connection.transaction { @Sendable connection in
                try connection.queryLater("INSERT INTO notes VALUES ($1)", [1])
                let error = #expect(throws: PostgresError.self) {
                    try connection.transaction { connection in _ = try connection.query(select, [0]) }
                }
                #expect(error?.sqlState == "42P01")
                try connection.query("CREATE TABLE later (id int)")
                let count: Int = try connection.query(select, [0])[0].decode(0)
                #expect(count == 0)
            }
        }
        #expect(ids == [1])
    }

    @Test("a statement gone stale is reported as transient when it runs in a batch, and prepared afresh after")
    func staleStatementInsideBatch() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let select = "SELECT * FROM shapes WHERE id = $1"
            try await withDirectConnection(db.url) { connection in
                try await connection.addColumnUnderPreparedStatement(select)
                await #expect { try await connection.transaction { @Sendable connection in try connection.query(select, [1]) } }
                    throws: { ($0 as? PostgresError)?.code == .staleStatement }
                let rows = try await connection.transaction { @Sendable connection in try connection.query(select, [1]) }
                #expect(try rows[0].decode("name", as: String.self) == "x")
            }
        }
    }
}
