import Foundation
import Logging
import Metrics
import Postgres
import Queue
import Worker

/// Job metrics for a worker process: what it leased and how each job ended, and a sampled view of the
/// whole queue (depth by kind and state, dead letters), which every worker reports alike.
public final class WorkerMetrics: WorkerObserver {
    private let leased: Counter
    private let completed: Counter
    private let retried: Counter
    private let deadLettered: Counter
    private let duration: Histogram
    private let depth: Gauge
    private let deadLetters: Gauge
    private let oldestAvailable: Gauge
    private let scheduledDue: Gauge

    public init(registry: MetricsRegistry) {
        leased = registry.counter("storesync_jobs_leased_total", help: "Jobs leased by this process.", labels: ["kind"])
        completed = registry.counter("storesync_jobs_completed_total", help: "Jobs completed.", labels: ["kind"])
        retried = registry.counter("storesync_jobs_retried_total", help: "Job attempts that failed and will retry.",
                                   labels: ["kind"])
        deadLettered = registry.counter("storesync_jobs_dead_lettered_total", help: "Jobs moved to dead letters.",
                                        labels: ["kind"])
        duration = registry.histogram("storesync_job_duration_seconds",
                                      help: "Time from lease to the durable commit of the outcome.",
                                      labels: ["kind", "outcome"])
        depth = registry.gauge("storesync_queue_depth", help: "Jobs in the queue by kind and state (sampled).",
                               labels: ["kind", "state"])
        deadLetters = registry.gauge("storesync_dead_letters", help: "Dead letters awaiting on-call (sampled).")
        oldestAvailable = registry.gauge("storesync_queue_oldest_available_age_seconds",
                                         help: "How long the oldest due job has waited for a worker (sampled).")
        scheduledDue = registry.gauge("storesync_scheduled_jobs_due",
                                      help: "Scheduled jobs by kind and the hour from now they fall due in, over the next "
                                          + "day: the daily resync's spread (sampled; estimated in a large queue).",
                                      labels: ["kind", "hours_ahead"])
    }

    public func jobsLeased(kind: String, count: Int) {
        leased.increment(by: count, kind)
    }

    public func jobFinished(kind: String, report: FinishReport?, sinceLease: Duration) {
        let outcome: String
        switch report {
        case .completed?:
            completed.increment(kind)
            outcome = "completed"
        case .retried?, .writesFailed(_, .retried)?:
            retried.increment(kind)
            outcome = "retried"
        case .deadLettered?, .writesFailed(_, .deadLettered)?:
            deadLettered.increment(kind)
            outcome = "dead_lettered"
        case .leaseLost?:
            outcome = "lease_lost"
        case nil:
            outcome = "unrecorded"
        }
        duration.observe(sinceLease, kind, outcome)
    }

    /// Samples the queue every `interval` until cancelled.
    public func sampleQueue(pool: PostgresPool, every interval: Duration) async {
        let logger = Logger(component: "metrics")
        while !Task.isCancelled {
            do {
                let status = try await QueueStatus.read(pool: pool)
                depth.replaceAll(status.depths.map { ([$0.kind, $0.state], Double($0.count)) })
                deadLetters.set(Double(status.deadLetters))
                oldestAvailable.set(status.oldestAvailableAgeSeconds)
                let thisHour = (Date().timeIntervalSince1970 / 3600).rounded(.down)
                scheduledDue.replaceAll(status.scheduledByHour.map { due in
                    ([due.kind, String(max(0, Int((due.hour.timeIntervalSince1970 / 3600).rounded(.down) - thisHour)))],
                     Double(due.count))
                })
            } catch {
                logger.warning("sampling the queue failed", ["error": .string("\(error)")])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
