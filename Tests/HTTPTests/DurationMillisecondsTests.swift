@testable import HTTP
import Testing

struct DurationMillisecondsTests {
    /// C timeouts read 0 as "none" and negative values as "forever": a positive sliver rounds up to 1 ms, and
    /// anything at or below zero, a deadline just past included, is 0.
    @Test(arguments: [
        (Duration.zero, 0), (.nanoseconds(1), 1), (.milliseconds(1), 1), (.microseconds(1_001), 2),
        (.milliseconds(1_500), 1_500), (.seconds(1) + .nanoseconds(1), 1_001),
        (.nanoseconds(-1), 0), (.microseconds(-1_500), 0), (.milliseconds(-999), 0), (.seconds(-1), 0),
        (.seconds(-3) - .milliseconds(250), 0),
    ] as [(Duration, Int)])
    func roundsUpAndNeverGoesNegative(duration: Duration, milliseconds: Int) {
        #expect(duration.roundedUpMilliseconds == milliseconds)
    }

    @Test func anAbsurdlyLongDurationSaturates() {
        #expect(Duration.seconds(Int64.max / 100).roundedUpMilliseconds == Int.max)
    }
}
