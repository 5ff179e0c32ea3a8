import Foundation
import Postgres
import Queue
import Testing

/// The retry schedule: exponential, capped, jittered, honouring hints, and long enough to outlast a
/// store outage of a day.
@Suite struct RetryPolicyTests {
    @Test(arguments: [(1, 10), (2, 20), (3, 40), (6, 320), (10, 5120), (11, 7200), (25, 7200), (1000, 7200)])
    func nominalDelayDoublesThenCaps(attempt: Int, seconds: Int64) {
        #expect(RetryPolicy().nominalDelay(afterAttempt: attempt) == .seconds(seconds))
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

    /// A hint longer than the backoff wins; a shorter one leaves the backoff alone; either way the hint is
    /// first clamped to the policy's range. No jitter, so each row has one answer.
    @Test(arguments: [
        (1, Duration.seconds(600), Duration.seconds(600)),
        (3, Duration.seconds(41), Duration.seconds(41)),
        (1, Duration.seconds(1), Duration.seconds(1)),
        (3, Duration.seconds(1), Duration.seconds(1)),
        (4, Duration.seconds(1), Duration.seconds(80)),
        (7, Duration.seconds(30), Duration.seconds(640)),
        (25, Duration.seconds(3600), Duration.seconds(7200)),
        (1, Duration.seconds(100_000), Duration.seconds(6 * 3600)),
        (25, Duration.seconds(100_000), Duration.seconds(6 * 3600)),
    ])
    func aHintIsFollowedOnTheFirstRetriesAndAfterThemOnlyLengthensTheBackoff(attempt: Int, hint: Duration,
                                                                             expected: Duration) {
        var policy = RetryPolicy()
        policy.jitter = 0
        #expect(policy.delay(afterAttempt: attempt, retryAfter: hint) == expected)
    }

    @Test(arguments: [Duration.zero, .milliseconds(10), .milliseconds(999)])
    func hintsBelowTheRangeAreRaisedToItsFloor(hint: Duration) {
        var policy = RetryPolicy()
        policy.base = .milliseconds(1)
        policy.jitter = 0
        #expect(policy.delay(afterAttempt: 1, retryAfter: hint) == .seconds(1))
    }

    /// Every retry uses up an attempt, so a short hint on every failure (a busy lineage's 1 s, a store's
    /// `Retry-After: 1` all through an outage) must not bring the last attempt any closer than the backoff does.
    @Test(arguments: [nil, Duration.seconds(1), .seconds(5), .seconds(60)])
    func defaultAttemptsSpanMoreThanADayWhateverShortHintEveryFailureCarries(hint: Duration?) {
        let policy = RetryPolicy()
        var lowestJitter = LowestJitter()
        #expect(abs(policy.delay(afterAttempt: 1, retryAfter: nil, using: &lowestJitter).seconds - 8) < 0.001)
        // 25 attempts means 24 waits.
        let total = (1..<25).map { policy.delay(afterAttempt: $0, retryAfter: hint, using: &lowestJitter).seconds }
            .reduce(0, +)
        #expect(total >= 24.6 * 3600)
    }

    @Test func aShortHintOnALateAttemptStillWaitsTheBackoff() {
        let busy = JobFailure.retryable("lineage L is being applied by another transaction", retryAfter: .seconds(1))
        let result = Finish.Result.after(busy, attempt: 10, maxAttempts: 25, policy: RetryPolicy())
        guard case .retry(_, let delay) = result else { Issue.record("expected a retry, got \(result)"); return }
        #expect(delay >= .seconds(5120 * 0.8) && delay <= .seconds(5120 * 1.2))
    }

    /// A lost race succeeds when run again: 1 s on the first retries, the backoff once it keeps recurring.
    @Test(arguments: [(1, 1.0...1.0), (3, 1.0...1.0), (10, 5120 * 0.8...5120 * 1.2)])
    func aSerializationFailureRetriesSoonThenBacksOff(attempt: Int, seconds: ClosedRange<Double>) {
        let raced = PostgresError(.serializationFailure, message: "could not serialize access")
        let result = Finish.Result.after(raced, attempt: attempt, maxAttempts: 25, policy: RetryPolicy())
        guard case .retry(_, let delay) = result else { Issue.record("expected a retry, got \(result)"); return }
        #expect(seconds.contains(delay.seconds), "\(delay)")
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
        let result = Finish.Result.after(Unexpected(), attempt: 1, maxAttempts: 25, policy: RetryPolicy())
        guard case .retry(_, let delay) = result else { Issue.record("expected a retry, got \(result)"); return }
        #expect(delay >= .seconds(8) && delay <= .seconds(12))
    }
}

/// Draws (about) the low end of every random range: the jitter that makes the retry schedule shortest.
/// 1, not 0: bounded draws reject 0 and would ask again forever; 1 maps to the range's first value.
private struct LowestJitter: RandomNumberGenerator {
    mutating func next() -> UInt64 { 1 }
}
