import Foundation
import Postgres
import Queue
import TestSupport
import Testing

/// Leaderless schedules: period keys, and exactly one claim per period however many workers race.
@Suite struct ScheduleTests {
    static let moment = Date(timeIntervalSince1970: 1_795_962_291)  // 2026-11-29T14:24:51Z

    @Test(arguments: [
        (Schedule.Period.daily, "2026-11-29"),
        (.hourly, "2026-11-29T14"),
        (.everyMinutes(15), "2026-11-29T14:15"),
        (.everyMinutes(1), "2026-11-29T14:24"),
    ])
    func periodKeys(period: Schedule.Period, key: String) {
        #expect(period.key(for: Self.moment) == key)
    }

    @Test func dailyKeyChangesAtUTCMidnight() {
        let beforeMidnight = Date(timeIntervalSince1970: 1_795_996_799)  // 2026-11-29T23:59:59Z
        #expect(Schedule.Period.daily.key(for: beforeMidnight) == "2026-11-29")
        #expect(Schedule.Period.daily.key(for: beforeMidnight.addingTimeInterval(1)) == "2026-11-30")
    }

    @Test func concurrentClaimsOfOnePeriodEnqueueOneJob() async throws {
        try await TestDatabase.with(poolSize: 8) { database in
            let schedule = Schedule(name: "daily-sync", period: .daily, job: TestHandlers.Record.self)
            let winners = try await withThrowingTaskGroup(of: Int64?.self) { group in
                for worker in 0..<8 {
                    group.addTask { try await schedule.claim(at: Self.moment, worker: "w\(worker)", pool: database.pool)?.jobID }
                }
                return try await group.reduce(into: [Int64]()) { if let id = $1 { $0.append(id) } }
            }
            #expect(winners.count == 1)
            let jobs = try await database.pool.query("SELECT payload::text, unique_key FROM jobs")
            #expect(jobs.count == 1)
            #expect(try jobs[0].decode(1, as: String.self) == "schedule:daily-sync:2026-11-29")
            let runs = try await database.pool.query("SELECT period, job_id FROM schedule_runs")
            #expect(try runs[0].decode(0, as: String.self) == "2026-11-29")
            #expect(try runs[0].decode(1, as: Int64.self) == winners[0])
            // The next day is a new period.
            let nextDay = try await schedule.claim(at: Self.moment.addingTimeInterval(86_400), worker: "w0", pool: database.pool)
            #expect(nextDay?.period == "2026-11-30" && nextDay?.jobID != nil)
        }
    }

    @Test func aClaimWithoutAMomentTakesThePeriodOfTheDatabaseClock() async throws {
        try await TestDatabase.with { database in
            let schedule = Schedule(name: "purge", period: .hourly, job: TestHandlers.Record.self)
            let before: Date = try await database.pool.query("SELECT now()")[0].decode(0)
            let claimed = try #require(try await schedule.claim(worker: "w0", pool: database.pool))
            let after: Date = try await database.pool.query("SELECT now()")[0].decode(0)
            let period: String = try await database.pool.query("SELECT period FROM schedule_runs")[0].decode(0)
            #expect(claimed.period == period)
            #expect([before, after].map(Schedule.Period.hourly.key(for:)).contains(period))
        }
    }
}
