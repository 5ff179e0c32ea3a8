import Accounts
import Foundation
import Postgres
import Queue
import Worker

/// The `daily-sync` schedule's job: fans out one resync per live lineage of every connection, at most once
/// per UTC day whichever worker claims the day (the schedule's unique period key). A failure part-way runs
/// the job again, and the resync jobs' unique keys cannot keep that re-run from doubling a lineage: a resync
/// that already finished left no row behind. So each connection's resyncs are enqueued in one transaction
/// with its `sweep_watermarks` row moving to the day, and a re-run — or a second worker running the job
/// after its lease expired — skips the connections already planned that day.
///
/// The resyncs' unique keys name the lineage but not the day (`resync:daily:<connection>:<md5(lineage)>`): a
/// lineage whose resync from an earlier day is still waiting — a spread longer than a day — is not queued a
/// second time, and the day's new resyncs queue behind that backlog rather than beside it, either of which
/// would double the connection's rate against the store and grow the backlog every day.
struct DailySyncHandler: JobHandler {
    static let schedule = Schedule(name: "daily-sync", period: .daily, job: PeriodArgs<DailySyncJob>.self, priority: -5)
    /// The batch name in every daily resync's unique key.
    static let batch = "daily"

    /// When the connection's last daily resync never tried yet is due, if that is still ahead: a failing one
    /// waits out its backoff (hours, at most), which must hold back neither the next day's fan-out nor its
    /// measure of the spread.
    private static func lastQueued(connectionID: Int64, on db: isolated PostgresConnection) throws -> Date? {
        try JobQueue.lastUntriedDue(priority: ResyncPlanner.priority, uniqueKeyPrefix: "resync:\(batch):\(connectionID):",
                                    on: db)
    }

    let settings: ResyncSettings

    func run(_ args: PeriodArgs<DailySyncJob>, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let period = args.day
        let connections = try await context.pool.run { db in try StoreConnections.list(on: db) }
        var total = 0
        var long: [String] = []
        for connection in connections {
            let planned = try await context.pool.transaction { db -> (added: Int, hours: Int)? in
                // The connection's fan-out watermark moves to the day, or the day was planned already.
                guard try Watermark.advance(connectionID: connection.id, sweep: Self.schedule.name, toDay: period, on: db)
                else { return nil }
                // A backlog from earlier days runs first: today's resyncs queue behind it, not beside it, so the
                // store never sees the connection's rate twice over.
                let backlogEnd = try Self.lastQueued(connectionID: connection.id, on: db)
                let spacing = 1 / ResyncPlanner.rate(for: connection, share: settings.rateShare)
                let added = try ResyncPlanner.enqueue(connection: connection, batch: Self.batch, reason: "daily",
                                                      start: backlogEnd.map { $0.addingTimeInterval(spacing) },
                                                      settings: settings, on: db)
                let end = try Self.lastQueued(connectionID: connection.id, on: db)
                let now = try JobQueue.now(on: db)
                return (added, end.map { Int($0.timeIntervalSince(now) / 3600) } ?? 0)
            }
            guard let (added, hours) = planned else {
                context.logger.info("daily resync already planned", ["connection": .int(Int(connection.id)),
                                                                     "period": .string(period)])
                continue
            }
            total += added
            context.logger.info("daily resync planned", ["connection": .int(Int(connection.id)), "lineages": .int(added),
                                                         "period": .string(period)])
            if hours >= 24 {
                long.append("connection \(connection.id) (\(hours) h)")
                context.logger.warning("daily resyncs are queued for longer than a day: the next days queue only "
                                       + "lineages whose resync finished, behind the rest; raise "
                                       + "STORESYNC_RESYNC_RATE_SHARE or shorten STORESYNC_RESYNC_HORIZON",
                                       ["connection": .int(Int(connection.id)), "lineages": .int(added),
                                        "hours": .int(hours)])
            }
        }
        return .done("planned \(total) resyncs" + (long.isEmpty ? "" : "; spread longer than a day: " + long.joined(separator: ", ")))
    }
}
