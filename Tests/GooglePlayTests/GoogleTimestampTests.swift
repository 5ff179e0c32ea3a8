import Foundation
import GooglePlay
import Testing

/// Guards `GoogleTimestamp`: Google's RFC 3339 times with 0 to 9 fractional digits and any offset become the right
/// instant (truncated to microseconds); anything else is refused rather than misread.
@Suite("Google timestamps")
struct GoogleTimestampTests {
    @Test("RFC 3339 times are read exactly", arguments: [
        ("2014-10-02T15:01:23Z", 1_412_262_083.0),
        ("2014-10-02T15:01:23.045123456Z", 1_412_262_083.045123),
        ("2014-10-02T15:01:23.045123999Z", 1_412_262_083.045123),
        ("2014-10-02T15:01:23.1Z", 1_412_262_083.1),
        ("2019-11-14T03:58:43.608Z", 1_573_703_923.608),
        ("2019-11-14t03:58:43.608z", 1_573_703_923.608),
        ("2019-11-14T05:58:43.608+02:00", 1_573_703_923.608),
        ("2019-11-13T22:28:43.608-05:30", 1_573_703_923.608),
        ("2024-02-29T23:59:59Z", 1_709_251_199.0),
        ("1969-12-31T23:00:00Z", -3600.0),
    ])
    func valid(text: String, seconds: Double) throws {
        let date = try #require(GoogleTimestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_000_5, "\(date.timeIntervalSince1970)")
    }

    @Test("anything that is not RFC 3339 is refused", arguments: [
        "", "2014-10-02", "2014-10-02T15:01Z", "2014-10-02T15:01:23", "2014-10-02 15:01:23Z", "2014-10-02T15:01:23.Z",
        "2014-10-02T15:01:23.0451234567Z", "2014-13-02T15:01:23Z", "2025-02-29T00:00:00Z", "2014-10-32T15:01:23Z",
        "2014-10-02T24:00:00Z", "2014-10-02T15:60:00Z", "2014-10-02T15:01:60Z", "2014-10-02T15:01:23+0200",
        "2014-10-02T15:01:23+24:00", "2014-10-02T15:01:23Zjunk", "1412262083000", "２014-10-02T15:01:23Z",
        "+2014-10-02T15:01:23Z",
    ])
    func invalid(text: String) {
        #expect(GoogleTimestamp.parse(text) == nil)
    }

    @Test("milliseconds since 1970 become the instant", arguments: [
        (Int64(1_503_349_566_168), 1_503_349_566.168), (0, 0), (-1000, -1),
    ])
    func milliseconds(milliseconds: Int64, seconds: Double) {
        #expect(GoogleTimestamp.date(milliseconds: milliseconds).timeIntervalSince1970 == seconds)
    }
}
