import Foundation
import Postgres
import Testing
import TestSupport

/// Guards how failures are classified (`PostgresError.classify`, `isTransient`), and that real server
/// errors arrive with the code, SQLSTATE and constraint callers branch on — so retry and reconnect
/// decisions never depend on parsing messages.
@Suite("Postgres errors")
struct PostgresErrorTests {
    @Test("classify maps SQLSTATEs to codes", arguments: [
        ("23505", PostgresError.Code.uniqueViolation),
        ("40001", .serializationFailure), ("40P01", .serializationFailure),
        ("08000", .connectionLost), ("08003", .connectionLost), ("08006", .connectionLost), ("08P01", .connectionLost),
        ("57P01", .connectionLost), ("57P02", .connectionLost), ("57P03", .connectionLost),
        ("42601", .other), ("23503", .other), ("23514", .other), ("25P02", .other), ("57014", .other), ("", .other),
    ])
    func classify(_ sqlState: String, _ expected: PostgresError.Code) {
        #expect(PostgresError.classify(sqlState: sqlState) == expected)
    }

    @Test("isTransient holds for failures worth retrying", arguments: [
        (PostgresError.Code.serializationFailure, true), (.connectionLost, true), (.poolTimeout, true), (.staleStatement, true),
        (.uniqueViolation, false), (.decoding, false), (.invalidConnectionString, false), (.other, false),
    ])
    func isTransient(_ code: PostgresError.Code, _ transient: Bool) {
        #expect(PostgresError(code, message: "test").isTransient == transient)
    }

    @Test("description names the code, SQLSTATE, message and constraint")
    func description() {
        let error = PostgresError(.uniqueViolation, sqlState: "23505", message: "duplicate key", constraint: "t_pkey")
        #expect(error.description == "database error (unique violation, SQLSTATE 23505): duplicate key [constraint t_pkey]")
        #expect(PostgresError(.poolTimeout, message: "busy").description == "database error (pool timeout): busy")
    }

    @Test("a duplicate key is a unique violation naming its constraint")
    func uniqueViolation() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.withConnection { connection in
                try await connection.query("CREATE TEMP TABLE items (sku text CONSTRAINT items_sku_key UNIQUE)")
                try await connection.query("INSERT INTO items (sku) VALUES ($1)", ["A-1"])
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.query("INSERT INTO items (sku) VALUES ($1)", ["A-1"])
                }
                #expect(error?.code == .uniqueViolation)
                #expect(error?.sqlState == "23505")
                #expect(error?.constraint == "items_sku_key")
                #expect(error?.isTransient == false)
                #expect(error?.message.contains("duplicate key") == true, "message: \(error?.message ?? "none")")
                // A statement error leaves the connection usable.
                #expect(await !connection.isBroken)
                let count: Int = try await connection.scalar("SELECT count(*) FROM items")
                #expect(count == 1)
            }
        }
    }

    @Test("a syntax error is .other with SQLSTATE 42601")
    func syntaxError() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let error = await #expect(throws: PostgresError.self) { try await db.pool.query("SELEC 1") }
            #expect(error?.code == .other)
            #expect(error?.sqlState == "42601")
            #expect(error?.constraint == nil)
            #expect(error?.isTransient == false)
            let one: Int = try await db.pool.scalar("SELECT 1")
            #expect(one == 1, "the pool still serves queries after a statement error")
        }
    }

    @Test("a check constraint violation is .other but still names its constraint")
    func checkViolation() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE stock (qty int CONSTRAINT stock_qty_positive CHECK (qty >= 0))")
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.query("INSERT INTO stock VALUES ($1)", [-1])
            }
            #expect(error?.code == .other)
            #expect(error?.sqlState == "23514")
            #expect(error?.constraint == "stock_qty_positive")
        }
    }

    @Test("write skew between serializable transactions is a transient serialization failure")
    func serializationFailure() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE oncall (doctor text PRIMARY KEY, on_call bool NOT NULL)")
            try await db.pool.query("INSERT INTO oncall VALUES ('alice', true), ('bob', true)")
            try await withDirectConnection(db.url) { first in
                try await withDirectConnection(db.url) { second in
                    // Each takes a doctor off call after checking someone else still is: classic write skew.
                    for connection in [first, second] {
                        try await connection.query("BEGIN ISOLATION LEVEL SERIALIZABLE")
                        let onCall: Int = try await connection.scalar("SELECT count(*) FROM oncall WHERE on_call")
                        #expect(onCall == 2)
                    }
                    try await first.query("UPDATE oncall SET on_call = false WHERE doctor = 'alice'")
                    try await second.query("UPDATE oncall SET on_call = false WHERE doctor = 'bob'")
                    try await first.query("COMMIT")
                    let error = await #expect(throws: PostgresError.self) { try await second.query("COMMIT") }
                    #expect(error?.code == .serializationFailure)
                    #expect(error?.sqlState == "40001")
                    #expect(error?.isTransient == true)
                }
            }
            let stillOnCall: Int = try await db.pool.scalar("SELECT count(*) FROM oncall WHERE on_call")
            #expect(stillOnCall == 1)
        }
    }

    @Test("a deadlock is a transient serialization failure (40P01) for exactly one side")
    func deadlock() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE ledger (id int PRIMARY KEY, balance int NOT NULL)")
            try await db.pool.query("INSERT INTO ledger VALUES (1, 100), (2, 100)")
            try await withDirectConnection(db.url) { first in
                try await withDirectConnection(db.url) { second in
                    try await first.query("BEGIN")
                    try await second.query("BEGIN")
                    try await first.query("UPDATE ledger SET balance = balance - 1 WHERE id = 1")
                    try await second.query("UPDATE ledger SET balance = balance - 1 WHERE id = 2")
                    // Each now waits for the other's row; the server's deadlock check breaks the cycle.
                    let outcomes = try await withTimeout("the deadlock to be detected", within: .seconds(30)) {
                        async let crossFirst = Self.outcome {
                            try await first.query("UPDATE ledger SET balance = balance + 1 WHERE id = 2")
                        }
                        async let crossSecond = Self.outcome {
                            try await second.query("UPDATE ledger SET balance = balance + 1 WHERE id = 1")
                        }
                        return try await [crossFirst, crossSecond]
                    }
                    let failures = outcomes.compactMap { $0 }
                    #expect(failures.count == 1, "outcomes: \(outcomes)")
                    #expect(failures.first?.code == .serializationFailure)
                    #expect(failures.first?.sqlState == "40P01")
                    #expect(failures.first?.isTransient == true)
                    try await first.query("ROLLBACK")
                    try await second.query("ROLLBACK")
                }
            }
        }
    }

    /// Runs `body`; nil when it succeeds, the `PostgresError` when it fails with one.
    private static func outcome(_ body: () async throws -> Void) async throws -> PostgresError? {
        do {
            try await body()
            return nil
        } catch let error as PostgresError {
            return error
        }
    }
}
