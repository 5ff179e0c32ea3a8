import Foundation
import Postgres
import Testing
import TestSupport

/// Guards `PostgresConnection`: transactions commit on return and roll back on throw, nested transactions
/// are savepoints, prepared statements and scripts run, `affectedRows` is reported, a lost server surfaces
/// as `.connectionLost` with `isBroken`, and blocking libpq calls stay off Swift's cooperative pool.
@Suite("Postgres connection")
struct PostgresConnectionTests {
    // MARK: - Transactions

    @Test("transaction commits when the body returns")
    func transactionCommits() async throws {
        let ids = try await notesCommitted { connection in
            let value = try await connection.transaction { @Sendable connection in
                try connection.query("INSERT INTO notes VALUES (1), (2)")
                return "returned"
            }
            #expect(value == "returned")
        }
        // Seen from another session, so it is committed, not just visible inside the transaction.
        #expect(ids == [1, 2])
    }

    @Test("run commits each statement on its own: a later failure keeps the earlier writes")
    func runAutocommitsEachStatement() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await db.pool.query("CREATE TABLE notes (id int PRIMARY KEY)")
            await #expect(throws: PostgresError.self) {
                try await db.pool.run { @Sendable connection in
                    try connection.query("INSERT INTO notes VALUES (1)")
                    try connection.query("INSERT INTO notes VALUES (1)")
                }
            }
            let count: Int = try await db.pool.scalar("SELECT count(*) FROM notes")
            #expect(count == 1)
        }
    }

    @Test("transaction rolls back when the body throws, and the connection is usable afterwards")
    func transactionRollsBack() async throws {
        let ids = try await notesCommitted { connection in
            await #expect(throws: Boom.self) {
                try await connection.transaction { @Sendable connection in
                    try connection.query("INSERT INTO notes VALUES (1)")
                    throw Boom()
                }
            }
            // Back in autocommit: this insert is visible to others at once.
            try await connection.query("INSERT INTO notes VALUES (2)")
        }
        #expect(ids == [2])
    }

    @Test("a failing statement inside a transaction rolls back the earlier writes")
    func transactionRollsBackOnStatementError() async throws {
        let ids = try await notesCommitted { connection in
            let error = await #expect(throws: PostgresError.self) {
                try await connection.transaction { @Sendable connection in
                    try connection.query("INSERT INTO notes VALUES (1)")
                    try connection.query("INSERT INTO notes VALUES (1)")
                }
            }
            #expect(error?.code == .uniqueViolation)
            _ = try await connection.transaction { @Sendable connection in try connection.query("INSERT INTO notes VALUES (5)") }
        }
        #expect(ids == [5])
    }

    @Test("a nested transaction is a savepoint: its throw undoes only its own writes")
    func nestedTransactionRollsBackInnerOnly() async throws {
        let ids = try await notesCommitted { connection in
            try await connection.transaction { @Sendable connection in
                try connection.query("INSERT INTO notes VALUES (1)")
                try connection.transaction { connection in
                    try connection.query("INSERT INTO notes VALUES (2)")
                    // Two levels deep, failing on a server error rather than a Swift throw.
                    let error = #expect(throws: PostgresError.self) {
                        try connection.transaction { connection in
                            try connection.query("INSERT INTO notes VALUES (3)")
                            try connection.query("INSERT INTO notes VALUES (1)")
                        }
                    }
                    #expect(error?.code == .uniqueViolation)
                    try connection.query("INSERT INTO notes VALUES (4)")
                }
                #expect(throws: Boom.self) {
                    try connection.transaction { connection in
                        try connection.query("INSERT INTO notes VALUES (5)")
                        throw Boom()
                    }
                }
                try connection.query("INSERT INTO notes VALUES (6)")
            }
        }
        #expect(ids == [1, 2, 4, 6])
    }

    @Test("an outer throw undoes writes of inner transactions that succeeded")
    func outerThrowUndoesInner() async throws {
        let ids = try await notesCommitted { connection in
            await #expect(throws: Boom.self) {
                try await connection.transaction { @Sendable connection in
                    try connection.query("INSERT INTO notes VALUES (1)")
                    _ = try connection.transaction { connection in try connection.query("INSERT INTO notes VALUES (2)") }
                    throw Boom()
                }
            }
            // The depth is back to zero: a new transaction is a real one, and it commits.
            _ = try await connection.transaction { @Sendable connection in try connection.query("INSERT INTO notes VALUES (3)") }
        }
        #expect(ids == [3])
    }

    @Test("a COMMIT that fails reports the error and leaves the connection able to run transactions")
    func failedCommit() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            // A deferred unique constraint is checked only at COMMIT.
            try await db.pool.query("CREATE TABLE codes (code text PRIMARY KEY DEFERRABLE INITIALLY DEFERRED)")
            try await withDirectConnection(db.url) { connection in
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.transaction { @Sendable connection in
                        try connection.query("INSERT INTO codes VALUES ('a')")
                        try connection.query("INSERT INTO codes VALUES ('a')")
                    }
                }
                #expect(error?.code == .uniqueViolation)
                #expect(await !connection.isBroken)
                do {
                    _ = try await connection.transaction { @Sendable connection in try connection.query("INSERT INTO codes VALUES ('b')") }
                } catch {
                    Issue.record("after a failed COMMIT the next transaction on the connection fails: \(error)")
                }
            }
            let codes = try await db.pool.query("SELECT code FROM codes").map { try $0.decode(0, as: String.self) }
            #expect(codes == ["b"])
        }
    }

    @Test("a transaction whose body swallowed a statement error throws rather than report a commit")
    func swallowedStatementError() async throws {
        let ids = try await notesCommitted { connection in
            // The server aborted the transaction at the failed statement; its COMMIT can only roll back.
            await #expect(throws: PostgresError.self, "transaction returned although nothing was committed") {
                try await connection.transaction { @Sendable connection in
                    try connection.query("INSERT INTO notes VALUES (1)")
                    _ = try? connection.query("SELECT 1 / 0")
                    return "reported as committed"
                }
            }
            #expect(await !connection.isBroken)
        }
        #expect(ids.isEmpty)
    }

    // MARK: - Statements

    @Test("a statement with parameters is prepared once per connection and then run by name")
    func preparedOnce() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let add = "SELECT $1::int8 + $2::int8 AS sum, $3::text AS label"
            try await withDirectConnection(db.url) { connection in
                for (a, b, label) in [(1, 2, "first"), (40, 2, "second"), (-5, 5, "it's third")] as [(Int64, Int64, String)] {
                    let row = try #require(try await connection.query(add, [a, b, label]).first)
                    #expect(try row.decode("sum", as: Int64.self) == a + b)
                    #expect(try row.decode("label", as: String.self) == label)
                }
                let prepared = try await connection.preparedCount(of: add)
                #expect(prepared == 1)
            }
        }
    }

    @Test("a statement prepared in a transaction that rolled back still runs")
    func preparedStatementAfterRollback() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let double = "SELECT $1::int8 * 2"
            try await withDirectConnection(db.url) { connection in
                await #expect(throws: Boom.self) {
                    try await connection.transaction { @Sendable connection in
                        let doubled: Int64 = try #require(try connection.query(double, [Int64(21)]).first).decode(0)
                        #expect(doubled == 42)
                        throw Boom()
                    }
                }
                let doubled: Int64 = try #require(try await connection.query(double, [Int64(4)]).first).decode(0)
                #expect(doubled == 8)
            }
        }
    }

    @Test("a statement that failed to prepare is prepared again once it can be")
    func failedPreparationIsRetried() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let select = "SELECT count(*) FROM later WHERE id > $1"
            try await withDirectConnection(db.url) { connection in
                await #expect(throws: PostgresError.self) { try await connection.query(select, [0]) }
                try await connection.query("CREATE TABLE later (id int)")
                let count: Int = try await connection.scalar(select, [0])
                #expect(count == 0)
            }
        }
    }

    @Test("a table changed under a prepared statement fails that run as transient; the next run sees the new shape")
    func schemaChangeUnderPreparedStatement() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let select = "SELECT * FROM shapes WHERE id = $1"
            try await withDirectConnection(db.url) { connection in
                try await connection.addColumnUnderPreparedStatement(select)
                await #expect { try await connection.query(select, [1]) } throws: { error in
                    let error = error as? PostgresError
                    return error?.code == .staleStatement && error?.isTransient == true && error?.sqlState == "0A000"
                }
                let row = try #require(try await connection.query(select, [1]).first)
                #expect(try row.decode("name", as: String.self) == "x")
                let prepared = try await connection.preparedCount(of: select)
                #expect(prepared == 1, "the stale statement is deallocated")
            }
        }
    }

    @Test("a column retyped under a prepared statement is prepared afresh with the new parameter type")
    func retypedColumnUnderPreparedStatement() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let select = "SELECT count(*) FROM codes WHERE code = $1"
            try await withDirectConnection(db.url) { connection in
                try await connection.query("CREATE TABLE codes (code text)")
                try await connection.query("INSERT INTO codes VALUES ('7')")
                let before: Int = try await connection.scalar(select, ["7"])
                #expect(before == 1)
                try await connection.query("ALTER TABLE codes ALTER COLUMN code TYPE int USING code::int")
                await #expect { try await connection.query(select, ["7"]) } throws: { error in
                    (error as? PostgresError)?.code == .staleStatement && (error as? PostgresError)?.sqlState?.hasPrefix("42") == true
                }
                let after: Int = try await connection.scalar(select, ["7"])
                #expect(after == 1)
            }
        }
    }

    @Test("affectedRows counts the rows INSERT, UPDATE and DELETE touched")
    func affectedRows() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await withDirectConnection(db.url) { connection in
                try await connection.query("CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)")
                #expect(try await connection.query("INSERT INTO counters (id) SELECT generate_series(1, 5)").affectedRows == 5)
                #expect(try await connection.query("UPDATE counters SET n = n + 1 WHERE id <= $1", [3]).affectedRows == 3)
                #expect(try await connection.query("UPDATE counters SET n = 0 WHERE false").affectedRows == 0)
                #expect(try await connection.query("DELETE FROM counters WHERE n = 0").affectedRows == 2)
                #expect(try await connection.query("DELETE FROM counters WHERE id = $1", [1]).affectedRows == 1)
                #expect(try await connection.query("DELETE FROM counters WHERE id = $1", [1]).affectedRows == 0)
                #expect(try await connection.query("CREATE TABLE other (id int)").affectedRows == 0)
            }
        }
    }

    @Test("executeScript runs several statements as one implicit transaction")
    func executeScript() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await withDirectConnection(db.url) { connection in
                try await connection.executeScript("""
                    CREATE TABLE a (id int);
                    INSERT INTO a VALUES (1);
                    INSERT INTO a VALUES (2), (3);
                    """)
                #expect(try await connection.scalar("SELECT sum(id) FROM a") as Int == 6)
                try await connection.executeScript("")

                let error = await #expect(throws: PostgresError.self) {
                    try await connection.executeScript("CREATE TABLE b (id int); INSERT INTO b VALUES (1); SELECT 1 / 0;")
                }
                #expect(error?.code == .other)
                #expect(error?.sqlState == "22012")
                #expect(try await connection.scalar("SELECT to_regclass('b') IS NULL") as Bool,
                        "the statements before the failing one were rolled back with it")
            }
        }
    }

    // MARK: - Session

    @Test("connect sets the application name, UTC and ISO dates; the URL may override the name")
    func sessionSettings() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await withDirectConnection(db.url, applicationName: "named-by-argument") { connection in
                let row = try #require(try await connection.query(
                    "SELECT current_setting('application_name'), current_setting('TimeZone'), current_setting('DateStyle')"
                ).first)
                #expect(try row.decode(0, as: String.self) == "named-by-argument")
                #expect(try row.decode(1, as: String.self) == "UTC")
                #expect(try row.decode(2, as: String.self).hasPrefix("ISO"))
            }
            let separator = db.url.contains("?") ? "&" : "?"
            try await withDirectConnection(db.url + separator + "application_name=named-by-url",
                                           applicationName: "ignored") { connection in
                let name: String = try await connection.scalar("SELECT current_setting('application_name')")
                #expect(name == "named-by-url")
            }
        }
    }

    @Test("connect turns on TCP keepalives and a TCP user timeout, so a vanished server fails a statement in seconds")
    func livenessDefaults() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await withDirectConnection(db.url) { connection in
                #expect(await connection.setting("keepalives") == "1")
                #expect(await connection.setting("keepalives_idle") == "10")
                #expect(await connection.setting("keepalives_interval") == "5")
                #expect(await connection.setting("keepalives_count") == "3")
                #expect(await connection.setting("tcp_user_timeout") == "10000")
                #expect(await connection.setting("no_such_setting") == nil)
            }
        }
    }

    @Test("the URL's own keepalive and TCP user timeout settings win over the defaults")
    func livenessOverrides() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let separator = db.url.contains("?") ? "&" : "?"
            let url = db.url + separator + "keepalives_idle=30&tcp_user_timeout=2500&keepalives=0"
            try await withDirectConnection(url) { connection in
                #expect(await connection.setting("keepalives") == "0")
                #expect(await connection.setting("keepalives_idle") == "30")
                #expect(await connection.setting("tcp_user_timeout") == "2500")
                #expect(await connection.setting("keepalives_count") == "3")
                let one: Int = try await connection.scalar("SELECT 1")
                #expect(one == 1)
            }
        }
    }

    // MARK: - Lost connections

    @Test("connecting to a port nobody listens on fails with .connectionLost")
    func connectToClosedPort() async {
        let error = await #expect(throws: PostgresError.self) {
            try await PostgresConnection.connect(url: "postgresql://x@127.0.0.1:1/db")
        }
        #expect(error?.code == .connectionLost)
        #expect(error?.isTransient == true)
        #expect(error?.message.contains("cannot connect") == true, "message: \(error?.message ?? "none")")
    }

    @Test("a URL libpq cannot parse fails as a configuration error whose description never holds the password", arguments: [
        "postgresql://u:topsecret@[::1/db", "postgresql://u:top%zzsecret@localhost/db",
        "postgresql://u@localhost/db?password=topsecret%zz", "host=localhost password=topsecret bogus=1",
    ])
    func connectWithMalformedURL(_ url: String) async {
        let error = await #expect(throws: PostgresError.self) {
            try await PostgresConnection.connect(url: url)
        }
        #expect(error?.code == .invalidConnectionString)
        #expect(error?.isTransient == false)
        let description = error.map(String.init(describing:)) ?? ""
        #expect(!description.contains("topsecret") && !description.contains("top%zzsecret"), "description: \(description)")
    }

    @Test("after its backend is terminated the next query fails with .connectionLost and isBroken is set")
    func terminatedBackend() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            try await withDirectConnection(db.url) { connection in
                #expect(await !connection.isBroken)
                try await terminateBackend(try await connection.backendPID(), using: db.pool)
                let error = await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
                #expect(error?.code == .connectionLost)
                #expect(await connection.isBroken)
                // It stays broken: no silent reconnect underneath the caller.
                let again = await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
                #expect(again?.code == .connectionLost)
            }
        }
    }

    @Test("a closed connection is broken and refuses queries with .connectionLost")
    func closedConnection() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let connection = try await PostgresConnection.connect(url: db.url)
            await connection.close()
            #expect(await connection.isBroken)
            let error = await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
            #expect(error?.code == .connectionLost)
            await connection.close()  // closing twice is harmless
        }
    }

    // MARK: - Threads

    @Test("blocking queries run on connection threads and leave the cooperative pool free")
    func blockingStaysOffCooperativePool() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let sleepers = 6
            let applicationName = uniqueName("sleeper")
            var connections: [PostgresConnection] = []
            for _ in 0..<sleepers {
                connections.append(try await PostgresConnection.connect(url: db.url, applicationName: applicationName))
            }
            let finished = Tally()
            let sleeps = connections.map { connection in
                Task {
                    try await connection.query("SELECT pg_sleep(8)")
                    finished.enter()
                }
            }
            // More blocking calls than the machine has cores, all in flight at once on the server.
            try await eventually("\(sleepers) pg_sleep calls to be running at the same time", timeout: .seconds(20)) {
                let running: Int = try await db.pool.scalar(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'PgSleep'",
                    [applicationName])
                return running == sleepers
            }
            let elapsed = await ContinuousClock().measure {
                await Task.detached {}.value
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<16 { group.addTask {} }
                }
            }
            let finishedMeanwhile = finished.total
            #expect(finishedMeanwhile == 0, "the sleeps were expected to still be running while the probe ran")
            // Blocked threads would hold the probe until the 8 s sleeps end; the margin absorbs a loaded machine.
            #expect(elapsed < .seconds(6), "trivial tasks took \(elapsed) while \(sleepers) queries blocked")
            for sleep in sleeps { try await sleep.value }
            #expect(finished.total == sleepers)
            for connection in connections { await connection.close() }
        }
    }
}
