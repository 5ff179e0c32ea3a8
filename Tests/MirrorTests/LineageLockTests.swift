import Foundation
@testable import Mirror
import Postgres
import TestSupport
import Testing

/// `LineageLock.acquire` takes answers sent ahead when they grant the lock, and otherwise locks and reads itself.
@Suite struct LineageLockTests {
    private static let key = "storesync.lineage:1:test"

    private static func read(_ value: String) -> PostgresStatement { PostgresStatement("SELECT $1::text", [value]) }

    /// Keeps, as the read-ahead of `key` and `read("fresh")`, a lock answer of `granted` and a read answering "ahead".
    private static func keepAhead(granted: Bool, on db: isolated PostgresConnection) throws {
        let readAhead = LineageLock.readAhead(key, thenRead: read("fresh"))
        db.keep(readAhead, answers: try db.query([PostgresStatement("SELECT $1::bool", [granted]), read("ahead")]))
    }

    private static func holdsLock(_ db: isolated PostgresConnection) throws -> Bool {
        try db.query("""
            SELECT count(*) > 0 FROM pg_locks
            WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
            """)[0].decode(0)
    }

    @Test func answersSentAheadThatGrantTheLockAreUsedOnce() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let (first, second) = try await db.pool.transaction { db -> (String, String) in
                try Self.keepAhead(granted: true, on: db)
                let first: String = try LineageLock.acquire(Self.key, thenRead: Self.read("fresh"), on: db)[0].decode(0)
                let second: String = try LineageLock.acquire(Self.key, thenRead: Self.read("fresh"), on: db)[0].decode(0)
                return (first, second)
            }
            #expect(first == "ahead", "the answers sent ahead were not used")
            #expect(second == "fresh", "answers sent ahead were used twice")
        }
    }

    @Test func aLockNotGrantedAheadIsTakenAndTheReadRunAgain() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let (value, locked) = try await db.pool.transaction { db -> (String, Bool) in
                try Self.keepAhead(granted: false, on: db)
                let value: String = try LineageLock.acquire(Self.key, thenRead: Self.read("fresh"), on: db)[0].decode(0)
                return (value, try Self.holdsLock(db))
            }
            #expect(value == "fresh")
            #expect(locked, "the lineage lock was not taken")
        }
    }
}
