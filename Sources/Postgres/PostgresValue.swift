import Foundation

/// A Swift value that can be sent as a query parameter, in PostgreSQL's text format unless it has a binary one.
/// Parameters are always bound (`$1…`), never spliced into SQL.
public protocol PostgresEncodable: Sendable {
    /// The text representation, or nil for SQL NULL.
    var postgresText: String? { get }
    /// The binary representation, or nil to send the text. Only `bytea` has one: its hex text is twice the
    /// bytes' size and costs a pass to write and another for the server to parse, and ingest sends every
    /// webhook body. The statement must name the parameter's type (`$1::bytea`), as every statement here does.
    var postgresBinary: [UInt8]? { get }
}

extension PostgresEncodable {
    public var postgresBinary: [UInt8]? { nil }
}

/// A value with a binary representation that can also travel inside a binary array, which names its
/// elements' type.
public protocol PostgresBinaryElement: PostgresEncodable {
    static var postgresTypeOID: UInt32 { get }
}

/// A Swift value that can be read from a column in PostgreSQL's text format.
public protocol PostgresDecodable {
    init(postgresText: String) throws
}

extension String: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { self }
    public init(postgresText: String) { self = postgresText }
}

extension Int: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { String(self) }
    public init(postgresText: String) throws {
        guard let value = Int(postgresText) else { throw PostgresError.undecodable(postgresText, as: "Int") }
        self = value
    }
}

extension Int64: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { String(self) }
    public init(postgresText: String) throws {
        guard let value = Int64(postgresText) else { throw PostgresError.undecodable(postgresText, as: "Int64") }
        self = value
    }
}

extension Int32: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { String(self) }
    public init(postgresText: String) throws {
        guard let value = Int32(postgresText) else { throw PostgresError.undecodable(postgresText, as: "Int32") }
        self = value
    }
}

extension Double: PostgresDecodable {
    public init(postgresText: String) throws {
        guard let value = Double(postgresText) else { throw PostgresError.undecodable(postgresText, as: "Double") }
        self = value
    }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { self ? "t" : "f" }
    public init(postgresText: String) throws {
        switch postgresText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw PostgresError.undecodable(postgresText, as: "Bool")
        }
    }
}

/// `bytea`: sent in binary, read in PostgreSQL's escape or hex format.
extension Data: PostgresBinaryElement, PostgresDecodable {
    public static var postgresTypeOID: UInt32 { 17 }

    public var postgresBinary: [UInt8]? { Array(self) }

    /// The text form, for the rare `bytea` sent as text (inside an array of optionals). Reads the bytes
    /// through one buffer: `Data`'s iterator cost more than the hex digits themselves.
    public var postgresText: String? {
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(2 + count * 2)
        bytes += "\\x".utf8
        withUnsafeBytes { raw in
            for byte in raw {
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads either of PostgreSQL's `bytea` output formats: hex (`\x0a1b…`), the server's default, or escape, which
    /// StoreSync's connections ask for (`PostgresConnection.connect`): a webhook body is text, so escape sends it
    /// nearly as is, half the bytes of hex, and reading it is one copy.
    public init(postgresText: String) throws {
        var text = postgresText
        let decoded: Data? = text.withUTF8 { utf8 in
            if utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x") { return Self.hex(utf8) }
            return Self.escaped(utf8)
        }
        guard let decoded else { throw PostgresError.undecodable(String(postgresText.prefix(16)), as: "Data (bytea)") }
        self = decoded
    }

    private static func hex(_ utf8: UnsafeBufferPointer<UInt8>) -> Data? {
        guard utf8.count % 2 == 0 else { return nil }
        // The table is bound once: read through `Self` in the loop, every byte paid for a lazy-global check.
        let nibbles = Self.nibbles
        return nibbles.withUnsafeBufferPointer { nibbles in
            var invalid: UInt8 = 0
            var data = Data(count: (utf8.count - 2) / 2)
            data.withUnsafeMutableBytes { bytes in
                for index in 0..<bytes.count {
                    let high = nibbles[Int(utf8[2 + 2 * index])], low = nibbles[Int(utf8[3 + 2 * index])]
                    invalid |= high | low
                    bytes[index] = high << 4 | low
                }
            }
            return invalid < 16 ? data : nil
        }
    }

    /// The escape format: a backslash is `\\`, a byte that is not printable ASCII `\` and three octal digits, and
    /// every other byte itself.
    private static func escaped(_ utf8: UnsafeBufferPointer<UInt8>) -> Data? {
        let backslash = UInt8(ascii: "\\")
        guard let first = utf8.firstIndex(of: backslash) else { return Data(utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        bytes += utf8[..<first]
        var index = first
        while index < utf8.count {
            let byte = utf8[index]
            guard byte == backslash else {
                bytes.append(byte)
                index += 1
                continue
            }
            if index + 1 < utf8.count, utf8[index + 1] == backslash {
                bytes.append(backslash)
                index += 2
                continue
            }
            guard index + 3 < utf8.count else { return nil }
            var value = 0
            for digit in utf8[(index + 1)...(index + 3)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { return nil }
                value = value * 8 + Int(digit - UInt8(ascii: "0"))
            }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
            index += 4
        }
        return Data(bytes)
    }

    /// Each byte's value as a hex digit, or 0xff: the lease reads every job's body, kilobytes of hex.
    private static let nibbles: [UInt8] = (0...255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(byte) - UInt8(ascii: "A") + 10
        default: 0xff
        }
    }
}

/// `timestamptz`. Connections set `DateStyle=ISO` and `TimeZone=UTC`, so the server always answers
/// `YYYY-MM-DD HH:MM:SS[.ffffff]+00`.
extension Date: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? {
        // Beyond what timestamptz can hold (and what Int64 microseconds can count): PostgreSQL's infinities,
        // never a crash on a date that came from outside.
        let micros = (timeIntervalSince1970 * 1_000_000).rounded()
        guard micros.isFinite, abs(micros) < 9.2e18, let exact = Int64(exactly: micros),
              abs(timeIntervalSince1970) < 9_000_000_000_000 else {
            return timeIntervalSince1970 < 0 ? "-infinity" : "infinity"
        }
        return Self.format(micros: exact)
    }

    /// Written digit by digit into one buffer: every booked charge and timeline row sends a few of these.
    private static func format(micros: Int64) -> String {
        var seconds = time_t(micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000)
        let fraction = micros - Int64(seconds) * 1_000_000
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        func digits(_ value: Int64, _ width: Int, then separator: UInt8?) {
            let text = String(value).utf8
            bytes += repeatElement(UInt8(ascii: "0"), count: max(0, width - text.count))
            bytes += text
            if let separator { bytes.append(separator) }
        }
        digits(Int64(parts.tm_year) + 1900, 4, then: UInt8(ascii: "-"))
        digits(Int64(parts.tm_mon) + 1, 2, then: UInt8(ascii: "-"))
        digits(Int64(parts.tm_mday), 2, then: UInt8(ascii: " "))
        digits(Int64(parts.tm_hour), 2, then: UInt8(ascii: ":"))
        digits(Int64(parts.tm_min), 2, then: UInt8(ascii: ":"))
        digits(Int64(parts.tm_sec), 2, then: UInt8(ascii: "."))
        digits(fraction, 6, then: nil)
        bytes += "+00".utf8
        return String(decoding: bytes, as: UTF8.self)
    }

    public init(postgresText: String) throws {
        guard let date = Self.parse(postgresText) else { throw PostgresError.undecodable(postgresText, as: "Date") }
        self = date
    }

    private static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var value = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        // Years past 9999 have more than four digits; everything after shifts by the extra ones.
        let yearDigits = b.firstIndex(of: UInt8(ascii: "-")) ?? 0
        let o = yearDigits - 4
        guard yearDigits >= 4, b.count >= 19 + o, let year = number(0, yearDigits), let month = number(5 + o, 2),
              let day = number(8 + o, 2), let hour = number(11 + o, 2), let minute = number(14 + o, 2),
              let second = number(17 + o, 2) else { return nil }
        var index = 19 + o
        var micros = 0
        if index < b.count, b[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                if digits < 6 { micros = micros * 10 + Int(b[index] - 48); digits += 1 }
                index += 1
            }
            while digits < 6 { micros *= 10; digits += 1 }
        }
        var offsetSeconds = 0
        if index < b.count, b[index] == UInt8(ascii: "+") || b[index] == UInt8(ascii: "-") {
            let sign = b[index] == UInt8(ascii: "-") ? -1 : 1
            guard let hours = number(index + 1, 2) else { return nil }
            var minutes = 0
            if b.count >= index + 6, b[index + 3] == UInt8(ascii: ":") {
                minutes = number(index + 4, 2) ?? 0
            }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let epoch = Int(timegm(&parts)) - offsetSeconds
        return Date(timeIntervalSince1970: Double(epoch) + Double(micros) / 1_000_000)
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresText: String? { self?.postgresText }
    public var postgresBinary: [UInt8]? { self?.postgresBinary }
}

/// A one-dimensional array parameter (`bigint[]`, `text[]`, …), the way batches of ids are sent in one
/// statement and unpacked with `unnest`.
public struct PostgresArray<Element: PostgresEncodable>: PostgresEncodable {
    public let elements: [Element]
    public init(_ elements: [Element]) { self.elements = elements }

    /// Built as UTF-8 bytes: elements can be kilobytes (timeline details, tokens), and appending them one
    /// Unicode scalar at a time was once 13 % of `bench pipeline`'s CPU. Escaping bytewise is exact because the
    /// two bytes escaped, `"` and `\`, never occur inside a multi-byte UTF-8 sequence.
    public var postgresText: String? {
        var text: [UInt8] = [UInt8(ascii: "{")]
        for element in elements {
            if text.count > 1 { text.append(UInt8(ascii: ",")) }
            guard let value = element.postgresText else {
                text += "NULL".utf8
                continue
            }
            text.reserveCapacity(text.count + value.utf8.count + 3)
            text.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { text.append(UInt8(ascii: "\\")) }
                text.append(byte)
            }
            text.append(UInt8(ascii: "\""))
        }
        text.append(UInt8(ascii: "}"))
        return String(decoding: text, as: UTF8.self)
    }

    /// PostgreSQL's binary array format (`array_recv`) when the elements have one: dimensions, a null flag,
    /// the element type, then each element as a length and its bytes, all integers big-endian.
    public var postgresBinary: [UInt8]? {
        guard let elementType = Element.self as? any PostgresBinaryElement.Type else { return nil }
        var buffer: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
        }
        append(Int32(elements.isEmpty ? 0 : 1))
        append(Int32(0))
        append(elementType.postgresTypeOID)
        if !elements.isEmpty {
            append(Int32(elements.count))
            append(Int32(1))
        }
        for value in elements {
            guard let bytes = value.postgresBinary else { return nil }
            append(Int32(bytes.count))
            buffer += bytes
        }
        return buffer
    }
}

extension PostgresError {
    static func undecodable(_ text: String, as type: String) -> PostgresError {
        PostgresError(.decoding, message: "cannot decode \(String(text.prefix(64)).debugDescription) as \(type)")
    }
}
