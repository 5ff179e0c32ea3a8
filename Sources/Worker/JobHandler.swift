import Logging
import Postgres
import Queue

/// What a handler has at hand while it runs a job.
public struct JobContext: Sendable {
    /// Carries the job's id, kind and attempt on every line.
    public let logger: Logger
    /// For reads before the job's writes (the writes themselves go in `JobResult.writes`).
    public let pool: PostgresPool
    /// The same pool's reads, sent together with other jobs' (see `PostgresReadBatcher`): for the read every job of
    /// a kind starts with.
    public let reads: PostgresReadBatcher
    /// The worker process holding the job's lease.
    public let workerID: String

    /// - Parameter reads: shared by the jobs running together; by default one of this context's own.
    public init(logger: Logger, pool: PostgresPool, reads: PostgresReadBatcher? = nil, workerID: String) {
        self.logger = logger
        self.pool = pool
        self.reads = reads ?? PostgresReadBatcher(pool: pool)
        self.workerID = workerID
    }
}

/// How a handler's run ended successfully.
public struct JobResult: Sendable {
    /// A short word for logs and metrics: `completed`, `duplicate`, `skipped: environment mismatch`, …
    public let outcome: String
    /// Database writes committed in the same transaction as the job's completion, or not at all (see `JobWrites`
    /// for the one outcome they can change).
    public let writes: JobWrites?
    /// What the writes lock, when other jobs' writes may lock it too (see `Finish.serialKey`).
    public let serialKey: String?
    /// What the writes begin with, to send ahead (see `Finish.readAhead`).
    public let readAhead: PostgresReadAhead?

    public static func done(_ outcome: String = "completed", writes: JobWrites? = nil, serialKey: String? = nil,
                            readAhead: PostgresReadAhead? = nil) -> JobResult
    {
        JobResult(outcome: outcome, writes: writes, serialKey: serialKey, readAhead: readAhead)
    }
}

/// Runs one kind of job: the kind of its `Args`, which the worker decodes each job's payload into before
/// `run` (a payload that does not decode is dead-lettered with the reason). Do the slow, side-effect-free work
/// (verifying, fetching) in `run`, and put every database change in the returned `writes` so it commits
/// exactly with the job's completion. Throw `JobFailure.permanent` for what can never succeed; anything else
/// thrown is retried. `job` carries what the payload does not: the raw body and headers of a webhook, the
/// attempt and the last error.
public protocol JobHandler: Sendable {
    associatedtype Args: JobArgs
    func run(_ args: Args, job: LeasedJob, context: JobContext) async throws -> JobResult
}

extension JobHandler {
    /// The kind the handler runs.
    public static var kind: JobKind { Args.kind }

    /// Decodes the job's args and runs it: how the worker runs a job.
    public func run(_ job: LeasedJob, context: JobContext) async throws -> JobResult {
        try await run(job.args(Args.self), job: job, context: context)
    }
}

/// Handlers by job kind, each registered under its args' kind, so a handler cannot be filed under a kind
/// whose payload it does not read. A job of a kind with no handler is dead-lettered ("no handler for kind X")
/// rather than retried forever.
public struct JobHandlers: Sendable {
    private var handlers: [String: any JobHandler] = [:]

    public init() {}

    /// Files `handler` under its args' kind: the kind is spelled once, by the args type.
    public mutating func register<Handler: JobHandler>(_ handler: Handler) {
        handlers[Handler.kind.name] = handler
    }

    public subscript(kind: String) -> (any JobHandler)? { handlers[kind] }

    public var kinds: [String] { handlers.keys.sorted() }
}
