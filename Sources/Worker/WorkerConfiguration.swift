import Foundation
import Queue

/// How one worker process runs jobs.
public struct WorkerConfiguration: Sendable {
    /// Jobs running at once in this process (slots).
    public var concurrency: Int = 32
    /// How often an idle worker looks for work when no NOTIFY woke it (the safety net for missed wake-ups
    /// and for scheduled jobs becoming due).
    public var pollInterval: Duration = .seconds(1)
    /// How long a lease lasts without a heartbeat; a crashed worker's jobs come back after at most this long.
    public var leaseDuration: Duration = .seconds(60)
    /// On SIGTERM, how long in-flight jobs may take to finish before their leases are released.
    public var gracePeriod: Duration = .seconds(30)
    /// Concurrent group commits of job outcomes, each with its own flusher; outcomes that lock the same
    /// thing (`Finish.serialKey`) always share one.
    public var completionFlushers: Int = 2
    public var retryPolicy = RetryPolicy()
    /// Recurring jobs this process competes to start each period.
    public var schedules: [Schedule] = []
    /// Identifies this process's leases; unique per process.
    public var workerID: String = WorkerConfiguration.defaultWorkerID()

    public init() {}

    /// `host:pid:random`, so leases name the process that holds them in `storesync status`.
    public static func defaultWorkerID() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "\(host):\(getpid()):\(suffix)"
    }
}
