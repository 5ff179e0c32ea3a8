import Foundation
import Mirror
import Postgres
import Queue
import Worker

/// The `daily-sync` schedule's job: fans out one resync per live lineage of every connection, at most once
/// per UTC day whichever worker claims the day (the schedule's unique period key). A failure part-way runs
/// the job again, and the resync jobs' unique keys cannot keep that re-run from doubling a lineage: a resync
/// that already finished left no row behind. So each connection's resyncs are enqueued in one transaction
/// with its `sweep_watermarks` row moving to the day, and a re-run — or a second worker running the job
/// after its lease expired — skips the connections already planned that day.
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
            let added = try await context.pool.transaction { db -> Int? in
                guard try Self.markPlanned(connectionID: connection.id, day: period, on: db) else { return nil }
                return try ResyncPlanner.enqueue(connection: connection, batch: period, reason: "daily",
                                                 settings: settings, on: db)
            }
            guard let added else {
                context.logger.info("daily resync already planned", ["connection": .int(Int(connection.id)),
                                                                     "period": .string(period)])
                continue
            }
            total += added
            context.logger.info("daily resync planned", ["connection": .int(Int(connection.id)), "lineages": .int(added),
                                                         "period": .string(period)])
        }
        return .done("planned \(total) resyncs")
    }

    /// Moves the connection's fan-out watermark to the start of `day` (UTC); false when it already stood
    /// there or later. A concurrent run waits on the row and then sees the day taken.
    private static func markPlanned(connectionID: Int64, day: String, on db: isolated PostgresConnection) throws -> Bool {
        try !db.query("""
            INSERT INTO sweep_watermarks (connection_id, sweep, watermark)
            VALUES ($1, $2, $3::date::timestamp AT TIME ZONE 'UTC')
            ON CONFLICT (connection_id, sweep) DO UPDATE SET watermark = EXCLUDED.watermark, updated_at = now()
                WHERE sweep_watermarks.watermark < EXCLUDED.watermark
            RETURNING 1
            """, [connectionID, schedule.name, day]).isEmpty
    }
}
