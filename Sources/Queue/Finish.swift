import Foundation
import Postgres

/// Database work a job does as part of its completion. It runs inside the completion's transaction, isolated from
/// the other jobs' failures (`JobQueue.finish`), so its effects commit if and only if the job is recorded as done.
/// It may run twice — again, in a savepoint, when another job's writes in the batch failed — so anything it does
/// besides writing (a log line, a counter) may happen twice too. Writes that record a
/// notification's receipt (`NotificationReceipts.record`) and find it recorded already are rolled back and their
/// job completes as `duplicate`: the handler decided before the completion's transaction, so a concurrent delivery
/// of the same notification that committed in between is found by the writes alone.
public typealias JobWrites = @Sendable (isolated PostgresConnection) throws -> Void

/// How one leased job ends this attempt.
public struct Finish: Sendable {
    public enum Result: Sendable {
        /// Done; the job row is deleted. `outcome` is a short word for logs and metrics (`duplicate` instead when
        /// the writes find their notification's receipt recorded already).
        case completed(outcome: String)
        /// Run again once `after` has passed; `error` is appended to the job's error history. A delay, not a
        /// time: the queue adds it to the database's `now()`, the clock the lease query compares `run_at` with,
        /// so a worker whose clock is off cannot make its retries fire early (or late).
        case retry(error: String, after: Duration)
        /// Never going to succeed: move to `dead_letters` with `reason`.
        case deadLetter(reason: String)
    }

    public let lease: LeaseRef
    public let maxAttempts: Int
    public let result: Result
    /// Only for `.completed`: the job's own writes, committed atomically with its completion.
    public let writes: JobWrites?
    /// What the writes lock, such as a purchase lineage. Outcomes with the same key are committed by the same
    /// flusher, one group commit after another, so two concurrent group commits never wait on each other for
    /// it; nil when the writes take no such lock (a dedup receipt alone, say).
    public let serialKey: String?
    /// What the writes begin with — their serial key's lock and the read under it — keyed by `serialKey`: sent
    /// ahead with the rest of the batch's in one round trip (`JobQueue.finish`), for the writes to take
    /// (`PostgresConnection.takeAnswers`).
    public let readAhead: PostgresReadAhead?

    public init(job: LeasedJob, result: Result, writes: JobWrites? = nil, serialKey: String? = nil,
                readAhead: PostgresReadAhead? = nil) {
        self.lease = job.lease
        self.maxAttempts = job.maxAttempts
        self.result = result
        self.writes = writes
        self.serialKey = serialKey
        self.readAhead = readAhead
    }
}

/// What actually happened to a `Finish` once committed.
public enum FinishReport: Sendable, Equatable {
    case completed(outcome: String)
    /// Due again after this delay, counted on the database's clock.
    case retried(after: Duration)
    case deadLettered(reason: String)
    /// The lease was lost (expired and taken by another worker, or released); nothing was written.
    case leaseLost
    /// The job's writes failed: it was turned into a retry or a dead letter instead.
    case writesFailed(error: String, then: Then)

    public enum Then: Sendable, Equatable {
        case retried(after: Duration)
        case deadLettered(reason: String)
    }
}
