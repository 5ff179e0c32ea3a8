/// How long to wait before the next connection attempt after consecutive failures: exponential from
/// `base`, capped at `cap`, with full jitter so a fleet of workers that lost the database together does not
/// reconnect in lockstep. Pure value: the pool and the listener own one each.
public struct ReconnectBackoff: Sendable {
    public let base: Duration
    public let cap: Duration
    public private(set) var consecutiveFailures = 0

    public init(base: Duration = .milliseconds(100), cap: Duration = .seconds(10)) {
        self.base = base
        self.cap = cap
    }

    /// The upper bound of the wait after `consecutiveFailures` failures (before jitter).
    public var ceiling: Duration {
        guard consecutiveFailures > 0 else { return .zero }
        let doublings = min(consecutiveFailures - 1, 30)
        let grown = base * (1 << doublings)
        return grown > cap ? cap : grown
    }

    /// Records a failure and returns how long to wait before trying again: uniformly random in
    /// [ceiling/2, ceiling] so waits still grow while spreading clients apart.
    public mutating func recordFailure<G: RandomNumberGenerator>(using generator: inout G) -> Duration {
        consecutiveFailures += 1
        let ceilingNanos = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        let half = ceilingNanos / 2
        return .nanoseconds(half + Int64.random(in: 0...max(half, 0), using: &generator))
    }

    public mutating func recordFailure() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return recordFailure(using: &generator)
    }

    public mutating func recordSuccess() { consecutiveFailures = 0 }
}
