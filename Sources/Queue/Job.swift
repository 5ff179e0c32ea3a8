import Foundation

/// A job to put on the queue.
public struct NewJob: Sendable {
    /// Selects the handler; lowercase letters, digits, `.`, `_`, `-`, at most 100 characters.
    public var kind: String
    /// JSON text (an object or any JSON value); stored as `jsonb`.
    public var payload: String
    /// The exact bytes that arrived, for jobs whose input must be verified as received (webhook bodies).
    public var raw: Data?
    /// JSON object of request headers worth keeping (e.g. `Authorization` for Pub/Sub pushes).
    public var headers: String?
    /// Higher runs first. Notifications 0, consumption answers 10, resync backlog -10.
    public var priority: Int16
    /// Not before this time; nil means now.
    public var runAt: Date?
    /// nil uses the table default (25: at least 24 hours of retries with the default policy).
    public var maxAttempts: Int?
    /// While a job with this key is pending, enqueueing another is a no-op.
    public var uniqueKey: String?

    public init(kind: String, payload: String = "{}", raw: Data? = nil, headers: String? = nil, priority: Int16 = 0,
                runAt: Date? = nil, maxAttempts: Int? = nil, uniqueKey: String? = nil) {
        self.kind = kind
        self.payload = payload
        self.raw = raw
        self.headers = headers
        self.priority = priority
        self.runAt = runAt
        self.maxAttempts = maxAttempts
        self.uniqueKey = uniqueKey
    }
}

/// A job this worker holds a lease on. `attempt` counts from 1 and, with `owner`, fences every write
/// about the job: once the lease is lost, nothing this worker does can complete or retry it.
public struct LeasedJob: Sendable, Identifiable {
    public let id: Int64
    public let kind: String
    public let payload: String
    public let raw: Data?
    public let headers: String?
    public let priority: Int16
    public let attempt: Int
    public let maxAttempts: Int
    public let createdAt: Date
    public let uniqueKey: String?
    /// Why the previous attempt failed (its retry message, or its lease lapsing); nil on a first attempt. Lets a
    /// handler bound a kind of failure by how often it happened in a row rather than by the attempt number, which
    /// other failures (an outage's 5xx) also count.
    public let lastError: String?

    public init(id: Int64, kind: String, payload: String, raw: Data?, headers: String?, priority: Int16, attempt: Int,
                maxAttempts: Int, createdAt: Date, uniqueKey: String?, lastError: String? = nil) {
        self.id = id
        self.kind = kind
        self.payload = payload
        self.raw = raw
        self.headers = headers
        self.priority = priority
        self.attempt = attempt
        self.maxAttempts = maxAttempts
        self.createdAt = createdAt
        self.uniqueKey = uniqueKey
        self.lastError = lastError
    }

    /// The identity a completion is fenced on.
    public var lease: LeaseRef { LeaseRef(id: id, attempt: attempt) }
}

/// Which lease of which job: a job id plus the attempt number the lease was granted for.
public struct LeaseRef: Sendable, Hashable {
    public let id: Int64
    public let attempt: Int

    public init(id: Int64, attempt: Int) {
        self.id = id
        self.attempt = attempt
    }
}
