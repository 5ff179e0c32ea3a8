import Foundation
import Postgres
import TestSupport
import Testing

/// `storesync-dev bench queue`: it drains what it enqueued and nothing else, and leaves the queue empty.
@Suite struct QueueBenchCLITests {
    @Test func aDrainPassesOverTheScheduledJobsAndLeavesTheQueueEmpty() async throws {
        try await TestDatabase.with { database in
            let result = try await ChildProcess.run("storesync-dev", ["bench", "queue", "--jobs", "300", "--scheduled", "2000",
                                                                  "--repeat", "1", "--slots", "16"],
                                                    environment: ["DATABASE_URL": database.url, "STORESYNC_LOG_LEVEL": "error"],
                                                    timeout: .seconds(120))
            #expect(result.status == 0, "\(result.stderr)")
            let figures = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                                       "not a JSON object: \(result.stdout)")
            #expect(figures["scheduled"] as? Int == 2000)
            let run = try #require((figures["runs"] as? [[String: Any]])?.first)
            #expect(run["completed"] as? Int == 300 && run["left_in_queue"] as? Int == 0)
            let status = try #require(run["queue_status"] as? [String: Any], "the sampler's read is timed")
            #expect(status["read_ms"] is Double && status["full_scan_by_kind_ms"] is Double)
            #expect(status["scheduled_estimated"] as? Bool == false, "2,300 jobs are counted exactly")
            #expect((figures["jobs_per_sec"] as? Double ?? 0) > 0)
            let left: Int = try await database.pool.query("SELECT count(*) FROM jobs")[0].decode(0)
            #expect(left == 0)
        }
    }

    @Test func aNegativeScheduledCountIsRefused() async throws {
        let result = try await ChildProcess.run("storesync-dev", ["bench", "queue", "--jobs", "1", "--scheduled", "-1"],
                                                environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--scheduled"), "stderr was: \(result.stderr)")
    }
}
