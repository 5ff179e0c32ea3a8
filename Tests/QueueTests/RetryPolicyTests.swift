import Foundation
import Queue
import Testing

/// The retry schedule: exponential, capped, jittered, honouring hints, and long enough to outlast a
/// store outage of a day.
@Suite struct RetryPolicyTests {
    @Test(arguments: [(1, 10), (2, 20), (3, 40), (6, 320), (10, 5120), (11, 7200), (25, 7200), (1000, 7200)])
    func nominalDelayDoublesThenCaps(attempt: Int, seconds: Int64) {
        #expect(RetryPolicy().nominalDelay(afterAttempt: attempt) == .seconds(seconds))
    }

    @Test func defaultAttemptsKeepRetryingForAtLeastADayEvenWithMinimalJitter() {
        let policy = RetryPolicy()
        // 25 attempts means 24 waits; take every wait at the low end of its jitter.
        let total = (1..<25).map { policy.nominalDelay(afterAttempt: $0).seconds * (1 - policy.jitter) }.reduce(0, +)
        #expect(total >= 24 * 3600)
    }

    @Test(arguments: 1...30)
    func jitterStaysWithinTwentyPercent(attempt: Int) {
        let policy = RetryPolicy()
        var generator = SystemRandomNumberGenerator()
        let nominal = policy.nominalDelay(afterAttempt: attempt).seconds
        for _ in 0..<50 {
            let delay = policy.delay(afterAttempt: attempt, retryAfter: nil, using: &generator).seconds
            #expect(delay >= nominal * 0.8 - 0.001 && delay <= nominal * 1.2 + 0.001)
        }
    }

    @Test(arguments: [
        (Duration.seconds(30), Duration.seconds(30)),
        (Duration.milliseconds(10), Duration.seconds(1)),
        (Duration.seconds(100_000), Duration.seconds(6 * 3600)),
    ])
    func retryAfterHintWinsWithinBounds(hint: Duration, expected: Duration) {
        #expect(RetryPolicy().delay(afterAttempt: 7, retryAfter: hint) == expected)
    }

    @Test func permanentFailureDeadLettersAtOnce() {
        let result = Finish.Result.after(JobFailure.permanent("bad input"), attempt: 1, maxAttempts: 25, policy: RetryPolicy())
        guard case .deadLetter(let reason) = result else { Issue.record("expected a dead letter, got \(result)"); return }
        #expect(reason == "bad input")
    }

    @Test func lastAttemptDeadLettersWithTheLastError() {
        let result = Finish.Result.after(JobFailure.retryable("timeout"), attempt: 25, maxAttempts: 25, policy: RetryPolicy())
        guard case .deadLetter(let reason) = result else { Issue.record("expected a dead letter, got \(result)"); return }
        #expect(reason == "gave up after 25 attempts; last error: timeout")
    }

    @Test func unknownErrorsAreRetried() {
        struct Unexpected: Error {}
        let now = Date()
        let result = Finish.Result.after(Unexpected(), attempt: 1, maxAttempts: 25, policy: RetryPolicy(), now: now)
        guard case .retry(_, let runAt) = result else { Issue.record("expected a retry, got \(result)"); return }
        #expect(runAt.timeIntervalSince(now) >= 8 && runAt.timeIntervalSince(now) <= 12)
    }
}
