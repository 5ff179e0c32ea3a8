import Foundation
import Mirror
import Queue
import Worker

/// The `daily-sync` schedule's job: fans out one resync per live lineage of every connection, at most once
/// per UTC day whichever worker claims the day (the schedule's unique period key), and never twice for the
/// same lineage that day (the resync jobs' unique keys) — so a crash mid-fan-out is simply run again.
public struct DailySyncHandler: JobHandler {
    public static let kind = "sync.daily"
    public static let schedule = Schedule(name: "daily-sync", period: .daily, jobKind: kind, priority: -5)

    let settings: ResyncSettings

    public func run(_ job: LeasedJob, context: JobContext) async throws -> JobResult {
        struct Payload: Decodable { let period: String }
        let period = (try? JSONDecoder().decode(Payload.self, from: Data(job.payload.utf8)).period)
            ?? Schedule.Period.daily.key(for: Date())
        let connections = try await context.pool.run { db in try StoreConnections.list(on: db) }
        var total = 0
        for connection in connections {
            let added = try await context.pool.transaction { db in
                try ResyncPlanner.enqueue(connection: connection, batch: period, reason: "daily", start: Date(),
                                          settings: settings, on: db)
            }
            total += added
            context.logger.info("daily resync planned", ["connection": .int(Int(connection.id)), "lineages": .int(added),
                                                         "period": .string(period)])
        }
        return .done("planned \(total) resyncs")
    }
}
