import Logging
import Postgres
import Queue

/// What a handler has at hand while it runs a job.
public struct JobContext: Sendable {
    /// Carries the job's id, kind and attempt on every line.
    public let logger: Logger
    /// For reads before the job's writes (the writes themselves go in `JobResult.writes`).
    public let pool: PostgresPool
    /// The worker process holding the job's lease.
    public let workerID: String
}

/// How a handler's run ended successfully.
public struct JobResult: Sendable {
    /// A short word for logs and metrics: `completed`, `duplicate`, `skipped: environment mismatch`, …
    public let outcome: String
    /// Database writes committed in the same transaction as the job's completion, or not at all; they may
    /// override `outcome` with what they found there (see `OutcomeOverride`).
    public let writes: JobWrites?
    /// What the writes lock, when other jobs' writes may lock it too (see `Finish.serialKey`).
    public let serialKey: String?

    public static func done(_ outcome: String = "completed", writes: JobWrites? = nil, serialKey: String? = nil)
        -> JobResult
    {
        JobResult(outcome: outcome, writes: writes, serialKey: serialKey)
    }
}

/// Runs one kind of job. Do the slow, side-effect-free work (verifying, fetching) in `run`, and put
/// every database change in the returned `writes` so it commits exactly with the job's completion.
/// Throw `JobFailure.permanent` for what can never succeed; anything else thrown is retried.
public protocol JobHandler: Sendable {
    func run(_ job: LeasedJob, context: JobContext) async throws -> JobResult
}

/// Handlers by job kind. A job of a kind with no handler is dead-lettered ("no handler for kind X")
/// rather than retried forever.
public struct HandlerRegistry: Sendable {
    private var handlers: [String: any JobHandler] = [:]

    public init() {}

    public mutating func register(_ kind: String, _ handler: any JobHandler) {
        handlers[kind] = handler
    }

    public subscript(kind: String) -> (any JobHandler)? { handlers[kind] }

    public var kinds: [String] { handlers.keys.sorted() }
}
