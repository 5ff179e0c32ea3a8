import Accounts
import Foundation
import IngestJobs
import Queue
import StoreModel
import Worker

/// The `sync.outage` job ingest queues once its database is back after answering webhooks 503: a
/// notification-history sweep of each affected host's App Store connections, now rather than at the next
/// daily reconciliation, so a database restart costs minutes of staleness instead of Apple's retry hours
/// (1, 12, 24, 48, 72). Google Play needs nothing: Pub/Sub redelivers a refused push with a backoff of at
/// most ten minutes, for seven days.
///
/// The sweeps are ordinary `apple.sweep` jobs with one key per connection, so while one is pending, further
/// outage reports (other serve instances, a flapping database) add nothing.
struct OutageSweepHandler: JobHandler {
    func run(_ payload: OutageSweepArgs, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let hosts = payload.hosts.prefix(1_000)
        let trusts = try await context.pool.run { db in try hosts.map { try db.query(HostTrust.loading(host: $0)) } }
        let connections = trusts.compactMap { $0 }.flatMap(\.connections)
        let apple = connections.filter { $0.store == .apple }.map(\.id)
        context.logger.info("sweeping store history after a database outage", [
            "from": .string(payload.from.formatted(.iso8601)), "to": .string(payload.to.formatted(.iso8601)),
            "apple_connections": .int(apple.count),
        ])
        return .done("queued \(apple.count) App Store sweep(s); Pub/Sub redelivers Google's pushes itself", writes: { db in
            for id in apple {
                try JobQueue.enqueueLater(AppleJobs.sweepJob(connectionID: id, uniqueKey: "sweep:outage:\(id)"), on: db)
            }
        })
    }
}
