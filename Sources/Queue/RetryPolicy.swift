import Foundation

/// When a failed job runs again.
///
/// Retry n (after failed attempt n) waits `min(base × 2^(n−1), cap)`, jittered by ±`jitter`. A `retry after`
/// hint (HTTP 429 / 503, a busy lineage), clamped to `hintRange`, is taken as it is for the first
/// `shortHintAttempts` retries — contention that clears in a second should not wait ten — and after that can
/// only lengthen the wait, never shorten it: every retry uses up an attempt, so a short hint repeated on every
/// failure (`Retry-After: 1` all through an hours-long outage) would otherwise spend all the attempts within a
/// minute and dead-letter a job that only needed the outage to end. The defaults (10 s doubling to a 2 h cap,
/// ±20 %, 25 attempts) keep retrying for about 31 hours — more than 24.6 hours even with the jitter always at
/// its low end, hints or not — because store outages last hours.
public struct RetryPolicy: Sendable {
    public var base: Duration = .seconds(10)
    public var cap: Duration = .seconds(7200)
    public var jitter: Double = 0.2
    public var hintRange: ClosedRange<Duration> = .seconds(1)...(.seconds(6 * 3600))
    /// Retries on which a hint shorter than the backoff is still followed as given.
    public var shortHintAttempts = 3

    public init() {}

    /// The nominal wait (no jitter) before the retry that follows failed attempt `attempt` (1-based).
    public func nominalDelay(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let grown = base * (1 << exponent)
        return grown > cap ? cap : grown
    }

    /// The wait before the next attempt: the jittered backoff; with a `retryAfter` (clamped to `hintRange`), the
    /// hint itself for the first `shortHintAttempts` attempts, and the longer of the two after them — never
    /// earlier than the failing party asked.
    public func delay<G: RandomNumberGenerator>(afterAttempt attempt: Int, retryAfter: Duration?,
                                                using generator: inout G) -> Duration {
        let factor = 1 + Double.random(in: -jitter...jitter, using: &generator)
        let backoff = nominalDelay(afterAttempt: attempt) * factor
        guard let retryAfter else { return backoff }
        let hint = min(max(retryAfter, hintRange.lowerBound), hintRange.upperBound)
        return attempt <= shortHintAttempts ? hint : max(hint, backoff)
    }

    public func delay(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterAttempt: attempt, retryAfter: retryAfter, using: &generator)
    }
}
