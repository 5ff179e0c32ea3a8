import Foundation
import IngestJobs
import Logging
import Postgres
import Queue
import Synchronization

/// The webhooks ingest answered 503 because its database was out of reach, remembered until the database is
/// back and then handed to the workers as one `sync.outage` job (`OutageSweepArgs`), which sweeps the
/// affected connections' store-side history at once. Apple retries a refused notification only after 1, 12,
/// 24, 48 and 72 hours, so without this a database restart would leave the mirror behind for hours.
///
/// Kept in memory: a `serve` restarted during the outage forgets it, and the daily reconciliation sweep is
/// then what catches up.
final class OutageLog: Sendable {
    /// Hosts remembered per outage; more are dropped (the daily sweep catches them up). The workers sweep only
    /// hosts that have an account, so made-up `Host` headers cost them a lookup each and nothing more.
    static let maxHosts = 1_000
    /// How often a pending outage is offered to the database.
    static let handOverInterval: Duration = .seconds(1)

    struct Outage: Sendable, Equatable {
        var hosts: Set<String>
        var from: Date
        var to: Date
    }

    private let pending = Mutex<Outage?>(nil)
    private let logger = Logger(component: "ingest")

    /// Returns whether this began a new pending outage.
    func record(host: String, at time: Date) -> Bool {
        pending.withLock { outage in
            guard var current = outage else {
                outage = Outage(hosts: [host], from: time, to: time)
                return true
            }
            if current.hosts.count < Self.maxHosts { current.hosts.insert(host) }
            current.from = min(current.from, time)
            current.to = max(current.to, time)
            outage = current
            return false
        }
    }

    var isPending: Bool { pending.withLock { $0 != nil } }

    /// Enqueues the pending outage's job, if there is one; one that cannot be enqueued stays pending, merged
    /// with what was refused meanwhile.
    func handOver(pool: PostgresPool) async {
        guard let outage = pending.withLock({ state in defer { state = nil }; return state }) else { return }
        do {
            try await JobQueue(pool: pool).enqueue(NewJob(Self.args(of: outage)))
            logger.info("database back: queued a sweep of the store history missed while it was down", [
                "hosts": .int(outage.hosts.count),
                "from": .string(ISO8601DateFormatter().string(from: outage.from)),
                "to": .string(ISO8601DateFormatter().string(from: outage.to)),
            ])
        } catch {
            pending.withLock { state in
                guard var merged = state else { state = outage; return }
                merged.hosts = Set(merged.hosts.union(outage.hosts).sorted().prefix(Self.maxHosts))
                merged.from = min(merged.from, outage.from)
                merged.to = max(merged.to, outage.to)
                state = merged
            }
        }
    }

    static func args(of outage: Outage) -> OutageSweepArgs {
        OutageSweepArgs(hosts: outage.hosts.sorted(), from: outage.from, to: outage.to)
    }
}
