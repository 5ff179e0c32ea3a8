import Foundation
@testable import Postgres
import Testing
import TestSupport

/// Guards `PostgresReadBatcher`: callers that wait together share one pipeline, each gets its own rows, a failing
/// statement fails only its own caller, a batch never carries more statements than allowed, and a closed pool's
/// error reaches every caller.
@Suite("Postgres read batcher")
struct PostgresReadBatcherTests {
    /// Each caller's reads: its own value, then the id of the transaction its statements ran in (a pipeline is one
    /// implicit transaction, so callers batched together share it).
    private static func reads(_ value: Int) -> [PostgresStatement] {
        [PostgresStatement("SELECT $1::int8", [value]), PostgresStatement("SELECT txid_current()")]
    }

    @Test("callers that wait together are sent in one pipeline, each answered with its own rows")
    func batchesWaitingCallers() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let answers = try await readTogether(1...20, maxStatements: 400, db)
            #expect(answers.count == 20)
            #expect(answers.allSatisfy { Int64($0.value) == $0.read }, "a caller got another caller's rows")
            #expect(Set(answers.map(\.transaction)).count <= 2, "the waiting callers were not sent together")
        }
    }

    @Test("a failing statement fails its own caller only, with the error it would have had alone")
    func failuresStayWithTheirCaller() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let (divided, missing, fine) = try await withHeldConnection(db) { pool, release in
                let batcher = PostgresReadBatcher(pool: pool, maxFlushes: 1)
                func outcome(_ statements: [PostgresStatement]) async -> Result<[PostgresRows], any Error> {
                    do { return .success(try await batcher.read(statements)) } catch { return .failure(error) }
                }
                async let divided = outcome([PostgresStatement("SELECT 1"), PostgresStatement("SELECT 1 / $1::int", [0])])
                async let missing = outcome([PostgresStatement("SELECT * FROM no_such_table")])
                async let fine = outcome(Self.reads(7))
                try await eventually("3 callers waiting for the held connection") { await batcher.waiting == 3 }
                await release()
                return await (divided, missing, fine)
            }
            if case .failure(let error as PostgresError) = divided { #expect(error.sqlState == "22012") }
            else { Issue.record("a division by zero did not fail: \(divided)") }
            if case .failure(let error as PostgresError) = missing { #expect(error.sqlState == "42P01") }
            else { Issue.record("a read of a missing table did not fail: \(missing)") }
            let rows = try fine.get()
            #expect(try rows[0][0].decode(0, as: Int64.self) == 7)
        }
    }

    @Test("a batch carries at most maxStatements statements, and never splits a caller's")
    func boundsBatches() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let answers = try await readTogether(1...9, maxStatements: 5, db)
            #expect(answers.allSatisfy { Int64($0.value) == $0.read }, "a caller got another caller's rows")
            let perTransaction = Dictionary(grouping: answers, by: \.transaction).values.map(\.count)
            #expect(perTransaction.allSatisfy { $0 <= 2 }, "a batch carried more than 5 statements: \(perTransaction)")
            #expect(perTransaction.filter { $0 == 2 }.count >= 3, "callers were not batched: \(perTransaction)")
        }
    }

    @Test("a closed pool's error reaches every caller")
    func closedPool() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let pool = PostgresPool(PostgresConfiguration(url: db.url, poolSize: 1))
            await pool.close()
            let batcher = PostgresReadBatcher(pool: pool)
            await #expect(throws: PostgresError.self) { try await batcher.read(Self.reads(1)) }
        }
    }

    /// One caller for each of `values` reads `reads(value)` through a batcher of one flush while the pool's only
    /// connection is held, which is released once every caller waits; each caller's value, what it read back, and
    /// the transaction its reads ran in.
    private func readTogether(_ values: ClosedRange<Int>, maxStatements: Int, _ db: TestDatabase) async throws
        -> [(value: Int, read: Int64, transaction: Int64)]
    {
        try await withHeldConnection(db) { pool, release in
            let batcher = PostgresReadBatcher(pool: pool, maxFlushes: 1, maxStatements: maxStatements)
            return try await withThrowingTaskGroup(of: (value: Int, read: Int64, transaction: Int64).self) { group in
                for value in values {
                    group.addTask {
                        let rows = try await batcher.read(Self.reads(value))
                        return (value, try rows[0][0].decode(0), try rows[1][0].decode(0))
                    }
                }
                // The first batch may have taken only the first callers before it began waiting for the connection.
                try await eventually("\(values.count) callers waiting for the held connection") {
                    await batcher.waiting == values.count
                }
                await release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
    }

    /// Runs `body` with a pool of one connection that another task holds until `body` calls `release`.
    private func withHeldConnection<T: Sendable>(
        _ db: TestDatabase, _ body: (PostgresPool, @Sendable () async -> Void) async throws -> T
    ) async throws -> T {
        let pool = PostgresPool(PostgresConfiguration(url: db.url, poolSize: 1, acquireTimeout: .seconds(30),
                                                      applicationName: uniqueName("read-batcher")))
        let gate = Gate()
        let (held, hold) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await pool.withConnection { _ in
                hold.yield()
                try await gate.wait()
            }
        }
        do {
            try await nextElement(of: held, "the connection to be held")
            let value = try await body(pool) { await gate.open() }
            try await holder.value
            await pool.close()
            return value
        } catch {
            holder.cancel()
            await pool.close()
            throw error
        }
    }
}
