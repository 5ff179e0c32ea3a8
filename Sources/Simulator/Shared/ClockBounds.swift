import Foundation

/// How far a control request may move a simulator's clock (the App Store's and the Play Store's alike).
/// Both keep it as milliseconds since 1970 in an `Int64`: with every request bounded here and every
/// configured period at most `longestSpan`, no date the simulators compute comes near overflowing it.
/// Scenario commands may still carry the clock a period past the window's end (a renewal moves it to the
/// period's end).
enum ClockBounds {
    /// The longest clock step a request may take, and the longest period an app may configure.
    static let longestSpan: Duration = .seconds(100 * 365 * 86_400)
    /// Where a request may move the clock: 2000-01-01 to 2200-01-01 UTC, in milliseconds since 1970.
    static let window: ClosedRange<Int64> = 946_684_800_000...7_258_118_400_000

    /// `now` moved forward by `duration`: at most `longestSpan`, and not past the window's end.
    static func advanced(_ now: Int64, by duration: Duration) throws -> Int64 {
        guard duration >= .zero else { throw SimulatorError(.invalidArgument, "the clock only moves forward") }
        guard duration <= longestSpan else {
            throw SimulatorError(.invalidArgument, "the clock moves at most 100 years at a time")
        }
        let target = now + duration.wholeMilliseconds
        guard target <= window.upperBound else {
            throw SimulatorError(.invalidArgument, "the clock does not move past 2200-01-01 (\(window.upperBound) ms)")
        }
        return target
    }

    /// A request's `to`, checked to lie in the window before anything moves.
    static func target(_ milliseconds: Int64) throws -> Int64 {
        guard window.contains(milliseconds) else {
            throw SimulatorError(.invalidArgument, "the clock moves to a time from 2000-01-01 to 2200-01-01 "
                                 + "(\(window.lowerBound)...\(window.upperBound) ms since 1970), got \(milliseconds)")
        }
        return milliseconds
    }
}
