import Postgres
import TestSupport
import Testing

/// Guards `ReconnectBackoff`, which paces reconnect attempts of the pool and the listener: the ceiling
/// doubles from `base` per consecutive failure up to `cap`, each wait is drawn from [ceiling/2, ceiling],
/// and a success starts over. Pure: a seeded generator makes the draws reproducible.
@Suite("Reconnect backoff")
struct ReconnectBackoffTests {
    @Test("the ceiling doubles from base per failure and is capped")
    func ceilingGrowth() {
        var backoff = ReconnectBackoff(base: .milliseconds(100), cap: .seconds(10))
        var generator = SplitMix64(seed: 1)
        #expect(backoff.ceiling == .zero)
        let expected: [Duration] = [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600),
            .milliseconds(3200), .milliseconds(6400), .seconds(10), .seconds(10), .seconds(10),
        ]
        for (failures, ceiling) in zip(1..., expected) {
            _ = backoff.recordFailure(using: &generator)
            #expect(backoff.consecutiveFailures == failures)
            #expect(backoff.ceiling == ceiling, "after \(failures) failures")
        }
    }

    @Test("the ceiling stays at the cap after very many failures")
    func ceilingAfterManyFailures() {
        var backoff = ReconnectBackoff(base: .seconds(1), cap: .seconds(30))
        var generator = SplitMix64(seed: 2)
        for _ in 0..<200 { _ = backoff.recordFailure(using: &generator) }
        #expect(backoff.consecutiveFailures == 200)
        #expect(backoff.ceiling == .seconds(30))
        let delay = backoff.recordFailure(using: &generator)
        #expect(delay >= .seconds(15) && delay <= .seconds(30))
    }

    @Test("every delay lies in [ceiling/2, ceiling]", arguments: [UInt64(0), 1, 42, 0xdead_beef, .max])
    func delaysWithinBounds(seed: UInt64) {
        var backoff = ReconnectBackoff(base: .milliseconds(50), cap: .seconds(5))
        var generator = SplitMix64(seed: seed)
        for _ in 0..<40 {
            let delay = backoff.recordFailure(using: &generator)
            let ceiling = backoff.ceiling
            #expect(delay >= ceiling / 2 && delay <= ceiling,
                    "delay \(delay) outside [\(ceiling / 2), \(ceiling)] after \(backoff.consecutiveFailures) failures")
        }
    }

    @Test("delays are jittered rather than constant")
    func delaysVary() {
        var generator = SplitMix64(seed: 7)
        var delays: Set<Duration> = []
        for _ in 0..<20 {
            var backoff = ReconnectBackoff(base: .seconds(1), cap: .seconds(10))
            delays.insert(backoff.recordFailure(using: &generator))
        }
        #expect(delays.count > 10, "20 first-failure delays gave only \(delays.count) distinct values")
        #expect(delays.allSatisfy { $0 >= .milliseconds(500) && $0 <= .seconds(1) })
    }

    @Test("the same seed gives the same delays")
    func deterministicWithSeed() {
        func delays(seed: UInt64) -> [Duration] {
            var backoff = ReconnectBackoff()
            var generator = SplitMix64(seed: seed)
            return (0..<12).map { _ in backoff.recordFailure(using: &generator) }
        }
        #expect(delays(seed: 99) == delays(seed: 99))
        #expect(delays(seed: 99) != delays(seed: 100))
    }

    @Test("recordSuccess starts over from base")
    func successResets() {
        var backoff = ReconnectBackoff(base: .milliseconds(100), cap: .seconds(10))
        var generator = SplitMix64(seed: 3)
        for _ in 0..<6 { _ = backoff.recordFailure(using: &generator) }
        #expect(backoff.ceiling == .milliseconds(3200))
        backoff.recordSuccess()
        #expect(backoff.consecutiveFailures == 0)
        #expect(backoff.ceiling == .zero)
        let delay = backoff.recordFailure(using: &generator)
        #expect(backoff.ceiling == .milliseconds(100))
        #expect(delay >= .milliseconds(50) && delay <= .milliseconds(100))
    }

    @Test("the defaults start at 100 ms and cap at 10 s")
    func defaults() {
        var backoff = ReconnectBackoff()
        #expect(backoff.base == .milliseconds(100))
        #expect(backoff.cap == .seconds(10))
        let delay = backoff.recordFailure()
        #expect(delay >= .milliseconds(50) && delay <= .milliseconds(100))
    }
}
