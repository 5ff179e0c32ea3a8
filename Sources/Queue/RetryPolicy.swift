import Foundation

/// When a failed job runs again.
///
/// Retry n (after failed attempt n) waits `min(base × 2^(n−1), cap)`, jittered by ±`jitter`, unless the
/// failure carried a `retry after` hint (HTTP 429 / 503), which wins, clamped to `hintRange`. The defaults
/// (10 s doubling to a 2 h cap, ±20 %, 25 attempts) keep retrying for about 31 hours — at least 24.7 hours
/// even with the jitter always at its low end — because store outages last hours.
public struct RetryPolicy: Sendable {
    public var base: Duration = .seconds(10)
    public var cap: Duration = .seconds(7200)
    public var jitter: Double = 0.2
    public var hintRange: ClosedRange<Duration> = .seconds(1)...(.seconds(6 * 3600))

    public init() {}

    /// The nominal wait (no jitter) before the retry that follows failed attempt `attempt` (1-based).
    public func nominalDelay(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let grown = base * (1 << exponent)
        return grown > cap ? cap : grown
    }

    /// The wait before the next attempt, honouring `retryAfter` when the failure named one.
    public func delay<G: RandomNumberGenerator>(afterAttempt attempt: Int, retryAfter: Duration?,
                                                using generator: inout G) -> Duration {
        if let retryAfter {
            return min(max(retryAfter, hintRange.lowerBound), hintRange.upperBound)
        }
        let nominal = nominalDelay(afterAttempt: attempt)
        let factor = 1 + Double.random(in: -jitter...jitter, using: &generator)
        return nominal * factor
    }

    public func delay(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterAttempt: attempt, retryAfter: retryAfter, using: &generator)
    }
}
