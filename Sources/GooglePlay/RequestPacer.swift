/// A token bucket as a schedule (the generic cell rate algorithm): each request reserves the next free slot and
/// learns when it may go, so waiting callers need no wake-up coordination and are served in the order they
/// asked. In any window of length T at most `burst + T / interval` requests go. A pure value: the caller supplies
/// the time and does the waiting.
struct RequestPacer: Sendable {
    /// Time between requests at the sustained rate.
    let interval: Duration
    let burst: Int
    /// The latest wait a reservation accepts; a request that would wait longer is refused instead.
    let maximumWait: Duration
    /// When the bucket would be empty again if every reservation so far had been spread at `interval`.
    private var theoreticalArrival: ContinuousClock.Instant?

    /// - Precondition: `perMinute` and `burst` are positive and `maximumWait` is not negative.
    init(perMinute: Int, burst: Int, maximumWait: Duration) {
        precondition(perMinute > 0 && burst > 0 && maximumWait >= .zero, "a pacer needs a positive rate and burst")
        interval = .seconds(60) / perMinute
        self.burst = burst
        self.maximumWait = maximumWait
    }

    enum Reservation: Equatable, Sendable {
        /// Go at this instant (`now` or later); the slot is taken.
        case at(ContinuousClock.Instant)
        /// The next slot is further away than `maximumWait`; nothing was reserved.
        case refused(wait: Duration)
    }

    /// Takes the next slot as of `now`.
    mutating func reserve(now: ContinuousClock.Instant) -> Reservation {
        let arrival = max(theoreticalArrival ?? now, now)
        let start = max(arrival - interval * (burst - 1), now)
        guard start - now <= maximumWait else { return .refused(wait: start - now) }
        theoreticalArrival = arrival + interval
        return .at(start)
    }
}
