import Accounts
import Foundation
import Mirror
import Queue
import StoreModel
import Worker

/// The daily `reconcile` schedule's job: one sweep job per connection (unique for the day), so one store's
/// outage delays only its own sweep.
public struct ReconcileHandler: JobHandler {
    public static let kind = "sync.reconcile"
    public static let schedule = Schedule(name: "reconcile", period: .daily, jobKind: kind, priority: -5)

    public static func sweepKind(for store: Store) -> String { "\(store.rawValue).sweep" }

    public func run(_ job: LeasedJob, context: JobContext) async throws -> JobResult {
        struct Payload: Decodable { let period: String }
        let period = (try? JSONDecoder().decode(Payload.self, from: Data(job.payload.utf8)).period)
            ?? Schedule.Period.daily.key(for: Date())
        let connections = try await context.pool.run { db in try StoreConnections.list(on: db) }
        return .done("planned \(connections.count) sweeps", writes: { db in
            for connection in connections {
                _ = try JobQueue.enqueue(NewJob(kind: Self.sweepKind(for: connection.store),
                                                payload: #"{"connection_id":\#(connection.id)}"#,
                                                priority: ResyncPlanner.priority,
                                                uniqueKey: "sweep:\(period):\(connection.id)"), on: db)
            }
            return nil
        })
    }
}
