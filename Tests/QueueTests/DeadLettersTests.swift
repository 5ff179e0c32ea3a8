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
}
