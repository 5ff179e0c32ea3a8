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
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
            try await withDirectConnection(db.url) { connection in
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
    }

    @Test("outside a transaction a batch is atomic: a failure throws it and undoes the statements before it")
    func batchFailureIsAtomic() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
            try await withDirectConnection(db.url) { connection in
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
            let ids = try await db.pool.query("SELECT id FROM notes ORDER BY id").map { try $0.decode(0, as: Int.self) }
            #expect(ids == [3])
        }
    }

    @Test("a deferred statement is visible to the next one and commits with its transaction")
    func deferredStatementRunsBeforeTheNext() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
            try await withDirectConnection(db.url) { connection in
                let seen = try await connection.transaction { @Sendable connection in
                    try connection.queryLater("INSERT INTO notes VALUES ($1)", [1])
                    let count: Int = try connection.query("SELECT count(*) FROM notes")[0].decode(0)
                    try connection.queryLater("INSERT INTO notes VALUES ($1)", [2])
                    return count
                }
                #expect(seen == 1)
            }
            let ids = try await db.pool.query("SELECT id FROM notes ORDER BY id").map { try $0.decode(0, as: Int.self) }
            #expect(ids == [1, 2], "the statement deferred last went with COMMIT")
        }
    }

    @Test("a deferred statement that fails fails its savepoint only, when the savepoint ends")
    func deferredFailureFailsItsSavepoint() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
            try await withDirectConnection(db.url) { connection in
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
            let ids = try await db.pool.query("SELECT id FROM notes ORDER BY id").map { try $0.decode(0, as: Int.self) }
            #expect(ids == [1, 3])
        }
    }

    @Test("a savepoint that throws before reaching the server is dropped; what was deferred before it still runs")
    func unsentSavepointIsDropped() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
            try await withDirectConnection(db.url) { connection in
                try await connection.transaction { @Sendable connection in
                    try connection.queryLater("INSERT INTO notes VALUES ($1)", [1])
                    #expect(throws: Boom.self) {
                        try connection.transaction { connection in
                            try connection.queryLater("INSERT INTO notes VALUES ($1)", [2])
                            throw Boom()
                        }
                    }
                }
            }
            let ids = try await db.pool.query("SELECT id FROM notes ORDER BY id").map { try $0.decode(0, as: Int.self) }
            #expect(ids == [1])
        }
    }

    @Test("a statement that cannot be prepared inside a batch fails only its savepoint, and is prepared once it can be")
    func preparationFailureInsideBatch() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let select = "SELECT count(*) FROM later WHERE id > $1"
            try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
            try await withDirectConnection(db.url) { connection in
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
            let ids = try await db.pool.query("SELECT id FROM notes ORDER BY id").map { try $0.decode(0, as: Int.self) }
            #expect(ids == [1])
        }
    }

    @Test("a statement gone stale is reported as transient when it runs in a batch, and prepared afresh after")
    func staleStatementInsideBatch() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let select = "SELECT * FROM shapes WHERE id = $1"
            try await withDirectConnection(db.url) { connection in
                try await connection.query("CREATE TABLE shapes (id int)")
                try await connection.query("INSERT INTO shapes VALUES (1)")
                #expect(try await connection.query(select, [1]).columns == ["id"])
                try await connection.query("ALTER TABLE shapes ADD COLUMN name text DEFAULT 'x'")
                await #expect { try await connection.transaction { @Sendable connection in try connection.query(select, [1]) } }
                    throws: { ($0 as? PostgresError)?.code == .staleStatement }
                let rows = try await connection.transaction { @Sendable connection in try connection.query(select, [1]) }
                #expect(try rows[0].decode("name", as: String.self) == "x")
            }
        }
    }
}
