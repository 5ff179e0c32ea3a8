import HTTP
import Testing

/// Guards `TokenBucket`, the schedule behind both store clients' rate limits: a burst goes at once, the
/// rest at the sustained rate in arrival order, an idle bucket refills, and a wait beyond the bound is
/// refused without taking a slot. Pure arithmetic on instants: no time passes.
@Suite("Token bucket")
struct TokenBucketTests {
    /// Requests arriving at `arrivals` (ms after a base instant) and when each may go, or nil when refused.
    struct Schedule: Sendable, CustomTestStringConvertible {
        let name: String
        let perSecond: Int
        let burst: Int
        var maximumWaitMilliseconds = 10_000
        let arrivals: [Int]
        let starts: [Int?]

        var testDescription: String { name }
    }

    static let schedules: [Schedule] = [
        Schedule(name: "a burst goes at once, the rest at the rate", perSecond: 10, burst: 3,
                 arrivals: [0, 0, 0, 0, 0], starts: [0, 0, 0, 100, 200]),
        Schedule(name: "burst 1 spaces every request", perSecond: 4, burst: 1, arrivals: [0, 0, 0], starts: [0, 250, 500]),
        Schedule(name: "requests slower than the rate never wait", perSecond: 10, burst: 1, arrivals: [0, 100, 250, 900],
                 starts: [0, 100, 250, 900]),
        Schedule(name: "an idle bucket refills to its burst, not beyond", perSecond: 10, burst: 2,
                 arrivals: [0, 0, 0, 5000, 5000, 5000], starts: [0, 0, 100, 5000, 5000, 5100]),
        Schedule(name: "a partly refilled bucket", perSecond: 10, burst: 3, arrivals: [0, 0, 0, 150, 150, 150],
                 starts: [0, 0, 0, 150, 200, 300]),
        Schedule(name: "waits beyond the bound are refused and take no slot", perSecond: 10, burst: 1,
                 maximumWaitMilliseconds: 150, arrivals: [0, 0, 0, 0, 100], starts: [0, 100, nil, nil, 200]),
        Schedule(name: "a zero bound refuses every wait", perSecond: 5, burst: 2, maximumWaitMilliseconds: 0,
                 arrivals: [0, 0, 0, 200], starts: [0, 0, nil, 200]),
    ]

    @Test("requests go when the schedule allows", arguments: schedules)
    func schedule(_ schedule: Schedule) {
        var bucket = TokenBucket(perSecond: schedule.perSecond, burst: schedule.burst,
                                 maximumWait: .milliseconds(schedule.maximumWaitMilliseconds))
        let base = ContinuousClock.now
        let starts = schedule.arrivals.map { arrival -> Int? in
            let now = base + .milliseconds(arrival)
            switch bucket.reserve(now: now) {
            case .at(let start): return Self.milliseconds(start - base)
            case .refused(let wait):
                #expect(wait > .milliseconds(schedule.maximumWaitMilliseconds))
                return nil
            }
        }
        #expect(starts == schedule.starts)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    @Test("a refusal says how long the wait would have been")
    func refusalWait() {
        var bucket = TokenBucket(perSecond: 2, burst: 1, maximumWait: .zero)
        let now = ContinuousClock.now
        #expect(bucket.reserve(now: now) == .at(now))
        #expect(bucket.reserve(now: now + .milliseconds(100)) == .refused(wait: .milliseconds(400)))
        #expect(bucket.interval == .milliseconds(500))
    }

    @Test("a per-minute limit (Google's) and a per-second one (Apple's) pace alike at the same rate")
    func perMinuteAndPerSecond() {
        let now = ContinuousClock.now
        var google = TokenBucket(perMinute: 120, burst: 1, maximumWait: .seconds(10))
        var apple = TokenBucket(perSecond: 2, burst: 1, maximumWait: .seconds(10))
        #expect(google.interval == apple.interval)
        for step in 0..<3 {
            #expect(google.reserve(now: now) == .at(now + .milliseconds(500 * step)))
            #expect(apple.reserve(now: now) == .at(now + .milliseconds(500 * step)))
        }
    }
}
