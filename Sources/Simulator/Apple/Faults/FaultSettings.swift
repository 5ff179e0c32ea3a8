/// How a rate-limited answer's `Retry-After` is written. Apple documents "a UNIX time, in milliseconds";
/// some clients read the RFC 9110 delay in seconds instead, so both can be exercised.
public enum RetryAfterFormat: String, Sendable, Codable {
    /// Apple's documented form: the wall-clock UNIX time in milliseconds when requests may resume.
    case unixTimeMilliseconds
    /// RFC 9110 `delay-seconds`, rounded up.
    case seconds
}

/// Failures the simulated App Store injects, so retry, backoff and recovery paths can be tested.
/// Counts are consumed one per request (or notification) as they happen.
public struct FaultSettings: Sendable, Equatable, Codable {
    /// The next this many server-API requests answer 429 `RateLimitExceededError` with `Retry-After`.
    public var rateLimitedRequests = 0
    public var retryAfterMilliseconds: Int64 = 1000
    public var retryAfterFormat = RetryAfterFormat.unixTimeMilliseconds
    /// The next this many server-API requests answer 500 `GeneralInternalError`.
    public var failedRequests = 0
    /// Added to every server-API request before it is answered (the handler suspends; no thread waits).
    public var latencyMilliseconds: Int64 = 0
    /// The next this many notifications are not sent, as if lost; they still appear in the notification
    /// history, as failures.
    public var droppedNotifications = 0

    public init() {}

    func validated() throws -> FaultSettings {
        guard rateLimitedRequests >= 0, failedRequests >= 0, droppedNotifications >= 0 else {
            throw SimulatorError(.invalidArgument, "fault counts must not be negative")
        }
        guard (0...86_400_000).contains(retryAfterMilliseconds), (0...600_000).contains(latencyMilliseconds) else {
            throw SimulatorError(.invalidArgument, "retry-after is 0...86400000 ms and latency 0...600000 ms")
        }
        return self
    }
}
