import Foundation
import Postgres
import Testing
import TestSupport

/// Guards `PostgresPool`: it never opens more than `poolSize` connections, callers that cannot get one
/// in time fail with `.poolTimeout`, a connection that broke is replaced rather than handed out again,
/// `transaction` rolls back on throw, and a closed pool refuses work with `.connectionLost`.
@Suite("Postgres pool")
struct PostgresPoolTests {
    @Test("hands out at most poolSize connections and reuses them")
    func poolSizeLimit() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let applicationName = uniqueName("pool-limit")
            let pool = PostgresPool(PostgresConfiguration(
                url: db.url, poolSize: 3, acquireTimeout: .seconds(20), applicationName: applicationName))
            let gate = Gate()
            let holders = Tally()
            let (handedOut, handOut) = AsyncStream.makeStream(of: Void.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        try await pool.withConnection { connection in
                            holders.enter()
                            handOut.yield()
                            try await gate.wait()
                            try await connection.query("SELECT 1")
                            holders.leave()
                        }
                    }
                }
                for index in 1...3 {
                    try await nextElement(of: handedOut, "connection \(index) of 3 to be handed out")
                }
                // Three tasks hold connections and two are waiting for one.
                #expect(holders.current == 3)
                #expect(try await db.pool.backendCount(applicationName: applicationName) == 3)
                await gate.open()
                try await group.waitForAll()
            }
            #expect(holders.total == 5)
            #expect(holders.peak == 3, "more tasks held a connection at once than poolSize allows")
            // The three connections went back to the pool and served the waiters: no fourth was opened.
            #expect(try await db.pool.backendCount(applicationName: applicationName) == 3)
            await pool.close()
        }
    }

    @Test("serves many concurrent callers through a small pool")
    func manyCallers() async throws {
        try await TestDatabase.with(poolSize: 2) { db in
            let sum = try await withThrowingTaskGroup(of: Int.self) { group in
                for value in 1...40 {
                    group.addTask { try await db.pool.scalar("SELECT $1::int8", [value]) }
                }
                return try await group.reduce(0, +)
            }
            #expect(sum == 820)
        }
    }

    @Test("a caller that gets no connection within acquireTimeout fails with .poolTimeout")
    func acquireTimeout() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let pool = PostgresPool(PostgresConfiguration(
                url: db.url, poolSize: 1, acquireTimeout: .milliseconds(300), applicationName: uniqueName("pool-timeout")))
            try await holding(1, of: pool) { _ in
                let clock = ContinuousClock()
                let start = clock.now
                let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
                let waited = clock.now - start
                #expect(error?.code == .poolTimeout)
                #expect(error?.isTransient == true)
                #expect(waited >= .milliseconds(300), "gave up after \(waited), before the acquire timeout")
            }
            // Once the connection is back, the pool serves again.
            #expect(try await pool.scalar("SELECT 1") as Int == 1)
            await pool.close()
        }
    }

    @Test("a waiter gets the connection another caller returns")
    func waiterGetsReturnedConnection() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let heldPID = try await holding(1, of: db.pool) { held in
                try await held[0].backendPID()
            }
            let pid: Int32 = try await db.pool.scalar("SELECT pg_backend_pid()")
            #expect(pid == heldPID, "poolSize 1 must reuse its one connection")
        }
    }

    @Test("a connection that broke while lent out is replaced, not handed out again")
    func brokenConnectionReplaced() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let firstPID: Int32 = try await db.pool.scalar("SELECT pg_backend_pid()")
            try await withDirectConnection(db.url) { killer in
                let error = await #expect(throws: PostgresError.self) {
                    try await db.pool.withConnection { connection in
                        let terminated: Bool = try await killer.scalar("SELECT pg_terminate_backend($1, 10000)", [firstPID])
                        #expect(terminated)
                        try await connection.query("SELECT 1")
                    }
                }
                #expect(error?.code == .connectionLost)
            }
            let secondPID: Int32 = try await db.pool.scalar("SELECT pg_backend_pid()")
            #expect(secondPID != firstPID)
        }
    }

    /// `run` reads the connection's state in the body's own visit to its thread; a broken one must still be dropped.
    @Test("a connection that broke during pool.run is replaced, not handed out again")
    func brokenConnectionReplacedAfterRun() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let firstPID: Int32 = try await db.pool.scalar("SELECT pg_backend_pid()")
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.run { connection in try connection.query("SELECT pg_terminate_backend(pg_backend_pid())") }
            }
            #expect(error?.code == .connectionLost)
            let secondPID: Int32 = try await db.pool.scalar("SELECT pg_backend_pid()")
            #expect(secondPID != firstPID)
        }
    }

    @Test("a waiter is served even when the connection it waited for comes back broken")
    func waiterServedAfterBrokenReturn() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await withDirectConnection(db.url) { killer in
                let (pid, waiter) = try await holding(1, of: db.pool) {
                    (held) async throws -> (Int32, Task<Int32, any Error>) in
                    let pid = try await held[0].backendPID()
                    let waiter = Task { try await db.pool.scalar("SELECT pg_backend_pid()") as Int32 }
                    let terminated: Bool = try await killer.scalar("SELECT pg_terminate_backend($1, 10000)", [pid])
                    #expect(terminated)
                    await #expect(throws: PostgresError.self) { try await held[0].query("SELECT 1") }
                    return (pid, waiter)
                }
                let servedBy = try await withTimeout("the waiter to be served") { try await waiter.value }
                #expect(servedBy != pid)
            }
        }
    }

    @Test("pool.transaction commits on return and rolls back on throw")
    func poolTransaction() async throws {
        try await TestDatabase.with(poolSize: 2) { db in
            try await db.pool.query("CREATE TABLE orders (id int PRIMARY KEY)")
            let value = try await db.pool.transaction { connection in
                try connection.query("INSERT INTO orders VALUES (1)")
                return try connection.scalar("SELECT count(*) FROM orders") as Int
            }
            #expect(value == 1)
            await #expect(throws: Boom.self) {
                try await db.pool.transaction { connection in
                    try connection.query("INSERT INTO orders VALUES (2)")
                    throw Boom()
                }
            }
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.transaction { connection in
                    try connection.query("INSERT INTO orders VALUES (3)")
                    try connection.query("INSERT INTO orders VALUES (1)")
                }
            }
            #expect(error?.code == .uniqueViolation)
            let ids = try await db.pool.query("SELECT id FROM orders ORDER BY id").map { try $0.decode(0, as: Int.self) }
            #expect(ids == [1])
        }
    }

    @Test("a closed pool refuses work with .connectionLost")
    func closedPool() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let one: Int = try await db.pool.scalar("SELECT 1")
            #expect(one == 1)
            await db.pool.close()
            let queryError = await #expect(throws: PostgresError.self) { try await db.pool.query("SELECT 1") }
            #expect(queryError?.code == .connectionLost)
            let transactionError = await #expect(throws: PostgresError.self) {
                try await db.pool.transaction { connection in try connection.query("SELECT 1") }
            }
            #expect(transactionError?.code == .connectionLost)
        }
    }

    @Test("closing fails waiting callers and closes lent connections when they come back")
    func closeWhileInUse() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let applicationName = uniqueName("pool-close")
            let pool = PostgresPool(PostgresConfiguration(
                url: db.url, poolSize: 1, acquireTimeout: .seconds(20), applicationName: applicationName))
            let waiter = try await holding(1, of: pool) { _ in
                // Whether it is already queued or arrives after close, it must fail the same way.
                let waiter = Task { try await pool.query("SELECT 1") }
                await pool.close()
                return waiter
            }
            let error = await #expect(throws: PostgresError.self) {
                try await withTimeout("the waiter to fail") { try await waiter.value }
            }
            #expect(error?.code == .connectionLost)
            try await eventually("the returned connection to be closed", timeout: .seconds(20)) {
                try await db.pool.backendCount(applicationName: applicationName) == 0
            }
        }
    }

    @Test("an unreachable database fails with .connectionLost, also when retried")
    func unreachableDatabase() async {
        let pool = PostgresPool(PostgresConfiguration(
            url: "postgresql://x@127.0.0.1:1/db", poolSize: 2, acquireTimeout: .seconds(2)))
        for attempt in 1...3 {
            let error = await #expect(throws: PostgresError.self, "attempt \(attempt)") { try await pool.query("SELECT 1") }
            #expect(error?.code == .connectionLost)
        }
        await pool.close()
    }
}

/// Takes `count` connections from `pool`, each held by its own task, runs `body` with them, then gives
/// them back. Each connection stays lent out for the whole of `body`, also when `body` throws.
private func holding<T: Sendable>(_ count: Int, of pool: PostgresPool,
                                  _ body: ([PostgresConnection]) async throws -> T) async throws -> T {
    let gate = Gate()
    let (handedOut, handOut) = AsyncStream.makeStream(of: PostgresConnection.self)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<count {
            group.addTask {
                try await pool.withConnection { connection in
                    handOut.yield(connection)
                    try await gate.wait()
                }
            }
        }
        do {
            var held: [PostgresConnection] = []
            for index in 1...count {
                held.append(try await nextElement(of: handedOut, "connection \(index) of \(count) from the pool"))
            }
            let value = try await body(held)
            await gate.open()
            try await group.waitForAll()
            return value
        } catch {
            await gate.open()
            group.cancelAll()
            throw error
        }
    }
}
