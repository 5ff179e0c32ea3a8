import Foundation
import Postgres
import Queue
import TestSupport
import Testing

/// On-call's replay of dead letters: each id gets its true result.
@Suite struct DeadLettersTests {
    @Test func anIDRetriedTwiceInOneCallIsRequeuedOnce() async throws {
        try await TestDatabase.with { database in
            try await JobQueue(pool: database.pool).enqueue(NewJob(kind: "k"))
            let connection = try await PostgresConnection.connect(url: database.url)
            let leased = try await JobQueue.lease(owner: "w", limit: 1, duration: .seconds(60), on: connection)
            _ = try await JobQueue.finish([Finish(job: leased[0], result: .deadLetter(reason: "gave up"))], owner: "w",
                                          on: connection)
            await connection.close()
            let id = leased[0].id
            let results = try await DeadLetters(pool: database.pool).retry(ids: [id, id])
            #expect(results == [id: .requeued])
            let jobs: Int = try await database.pool.query("SELECT count(*) FROM jobs WHERE id = $1", [id])[0].decode(0)
            #expect(jobs == 1)
        }
    }

    /// A job with a dead letter's unique key enqueued by another session while `retry --all` runs: that id stays a
    /// dead letter and says why, and the rest of the batch is still requeued.
    @Test func aUniqueKeyTakenMidRetryKeepsThatDeadLetterAndRequeuesTheRest() async throws {
        try await TestDatabase.with { database in
            let queue = JobQueue(pool: database.pool)
            try await queue.enqueue(NewJob(kind: "k", uniqueKey: "key-a"))
            try await queue.enqueue(NewJob(kind: "k", uniqueKey: "key-b"))
            let connection = try await PostgresConnection.connect(url: database.url)
            let leased = try await JobQueue.lease(owner: "w", limit: 2, duration: .seconds(60), on: connection)
            _ = try await JobQueue.finish(leased.map { Finish(job: $0, result: .deadLetter(reason: "gave up")) }, owner: "w",
                                          on: connection)
            let ids = leased.map(\.id).sorted()
            // The other session's job, not yet committed: the retry's check cannot see it, its insert waits on it.
            try await connection.query("BEGIN")
            try await connection.query("INSERT INTO jobs (kind, unique_key) VALUES ('k', 'key-a')")
            let retry = Task { try await DeadLetters(pool: database.pool).retry(ids: ids) }
            try await eventually("the retry to wait on the other session's unique key") {
                let waiting: Int = try await database.pool.query("""
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock'
                      AND query LIKE '%storesync_retry_dead_letter%'
                    """)[0].decode(0)
                return waiting == 1
            }
            try await connection.query("COMMIT")
            await connection.close()
            let results = try await retry.value
            let keyA = try #require(leased.first { $0.uniqueKey == "key-a" }?.id)
            let keyB = try #require(leased.first { $0.uniqueKey == "key-b" }?.id)
            #expect(results == [keyA: .duplicateUniqueKey("key-a"), keyB: .requeued])
            let dead: [Int64] = try await database.pool.query("SELECT id FROM dead_letters").map { try $0.decode(0) }
            #expect(dead == [keyA])
        }
    }
}
