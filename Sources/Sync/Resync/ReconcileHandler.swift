import Accounts
import Foundation
import Queue
import StoreModel
import Worker

/// The daily `reconcile` schedule's job: one sweep job per connection (unique for the day), so one store's
/// outage delays only its own sweep.
struct ReconcileHandler: JobHandler {
    static let schedule = Schedule(name: "reconcile", period: .daily, job: PeriodArgs<ReconcileJob>.self, priority: -5)

    func run(_ args: PeriodArgs<ReconcileJob>, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let period = args.day
        let connections = try await context.pool.run { db in try StoreConnections.list(on: db) }
        return .done("planned \(connections.count) sweeps", writes: { db in
            for connection in connections {
                try JobQueue.enqueueLater(connection.store.jobs.sweepJob(connectionID: connection.id, priority: ResyncPlanner.priority,
                                                                         uniqueKey: "sweep:\(period):\(connection.id)"), on: db)
            }
        })
    }
}
