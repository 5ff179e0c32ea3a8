import HTTP

/// The current fault settings, consumed under a lock by concurrent requests.
final class FaultInjector: Sendable {
    private let settings = Locked(FaultSettings())

    var current: FaultSettings { settings.withLock { $0 } }

    func replace(_ new: FaultSettings) throws {
        let checked = try new.validated()
        settings.withLock { $0 = checked }
    }

    func update(_ change: (inout FaultSettings) -> Void) throws {
        try settings.withLock { value in
            var next = value
            change(&next)
            value = try next.validated()
        }
    }

    /// Whether this request is rate-limited, and if so the `Retry-After` to send.
    func takeRateLimit() -> (Int64, RetryAfterFormat)? {
        settings.withLock { value in
            guard value.rateLimitedRequests > 0 else { return nil }
            value.rateLimitedRequests -= 1
            return (value.retryAfterMilliseconds, value.retryAfterFormat)
        }
    }

    func takeFailure() -> Bool {
        settings.withLock { value in
            guard value.failedRequests > 0 else { return false }
            value.failedRequests -= 1
            return true
        }
    }

    func takeDrop() -> Bool {
        settings.withLock { value in
            guard value.droppedNotifications > 0 else { return false }
            value.droppedNotifications -= 1
            return true
        }
    }

    var latency: Duration { .milliseconds(settings.withLock { $0.latencyMilliseconds }) }
}
