/// A token bucket as a schedule (the generic cell rate algorithm): each request reserves the next free
/// slot and learns when it may go, so waiting callers need no wake-up coordination and are served in
/// the order they asked. In any window of length T at most `burst + T / interval` requests go. A pure value:
/// the caller supplies the time and does the waiting. Both store clients pace their API calls with it.
public struct TokenBucket: Sendable {
    /// Time between requests at the sustained rate.
    public let interval: Duration
    /// Requests that may go at once after the bucket has been idle long enough to refill.
    public let burst: Int
    /// The latest wait a reservation accepts; a request that would wait longer is refused instead.
    public let maximumWait: Duration
    /// When the bucket would be empty again if every reservation so far had been spread at `interval`.
    private var theoreticalArrival: ContinuousClock.Instant?

    /// - Precondition: `interval` and `burst` are positive and `maximumWait` is not negative.
    public init(interval: Duration, burst: Int, maximumWait: Duration) {
        precondition(interval > .zero && burst > 0 && maximumWait >= .zero, "a token bucket needs a positive rate and burst")
        self.interval = interval
        self.burst = burst
        self.maximumWait = maximumWait
    }

    /// A bucket for a limit stated per second (Apple's).
    public init(perSecond: Int, burst: Int, maximumWait: Duration) {
        precondition(perSecond > 0, "a token bucket needs a positive rate")
        self.init(interval: .seconds(1) / perSecond, burst: burst, maximumWait: maximumWait)
    }

    /// A bucket for a limit stated per minute (Google's).
    public init(perMinute: Int, burst: Int, maximumWait: Duration) {
        precondition(perMinute > 0, "a token bucket needs a positive rate")
        self.init(interval: .seconds(60) / perMinute, burst: burst, maximumWait: maximumWait)
    }

    /// What a reservation at some time obtained.
    public enum Reservation: Equatable, Sendable {
        /// Go at this instant (`now` or later); the slot is taken.
        case at(ContinuousClock.Instant)
        /// The next slot is further away than `maximumWait`; nothing was reserved.
        case refused(wait: Duration)
    }

    /// Takes the next slot as of `now`.
    public mutating func reserve(now: ContinuousClock.Instant) -> Reservation {
        let arrival = max(theoreticalArrival ?? now, now)
        let start = max(arrival - interval * (burst - 1), now)
        guard start - now <= maximumWait else { return .refused(wait: start - now) }
        theoreticalArrival = arrival + interval
        return .at(start)
    }
}
