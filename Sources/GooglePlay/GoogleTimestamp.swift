import Foundation

/// Google's `google-datetime`: RFC 3339 with 0 to 9 fractional digits (`2014-10-02T15:01:23.045123456Z`).
/// Parsed by hand because Foundation's ISO 8601 formatter on Linux rejects nine fractional digits, and a time
/// that fails to parse would fail a whole purchase.
public enum GoogleTimestamp {
    /// The instant `text` names, truncated to microseconds (what PostgreSQL keeps), or `nil` when it is not
    /// RFC 3339: a date, `T`, a time with seconds, an optional fraction of 1 to 9 digits, then `Z` or `±HH:MM`.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard (20...40).contains(bytes.count) else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, is allowed: String) -> Bool {
            index < bytes.count && allowed.utf8.contains(bytes[index])
        }
        guard let year = number(0, 4), byte(4, is: "-"), let month = number(5, 2), byte(7, is: "-"),
              let day = number(8, 2), byte(10, is: "Tt"), let hour = number(11, 2), byte(13, is: ":"),
              let minute = number(14, 2), byte(16, is: ":"), let second = number(17, 2) else { return nil }
        var index = 19
        var nanos = 0
        if byte(index, is: ".") {
            index += 1
            var digits = 0
            while digits < 10, let digit = number(index, 1) {
                nanos = nanos * 10 + digit
                digits += 1
                index += 1
            }
            guard (1...9).contains(digits) else { return nil }
            for _ in digits..<9 { nanos *= 10 }
        }
        let offset: Int
        if byte(index, is: "Zz"), index + 1 == bytes.count {
            offset = 0
        } else if byte(index, is: "+-"), index + 6 == bytes.count, let hours = number(index + 1, 2), byte(index + 3, is: ":"),
                  let minutes = number(index + 4, 2), hours < 24, minutes < 60 {
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60,
              second < 60 else { return nil }
        let seconds = Int64(daysFromCivil(year: year, month: month, day: day)) * 86_400
            + Int64(hour * 3600 + minute * 60 + second - offset)
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanos / 1000) / 1_000_000)
    }

    /// Milliseconds since 1970, as Google's `…Millis` fields count.
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
