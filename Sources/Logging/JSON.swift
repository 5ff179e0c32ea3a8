import Foundation

/// Minimal JSON string escaping shared by the log writer and the CLI's `--json` output.
public enum JSON {
    /// Appends `value` as a quoted JSON string, escaping per RFC 8259 §7. Works on UTF-8 bytes (every byte
    /// escaped is ASCII, so never part of a multi-byte sequence): strings of kilobytes — signed payloads the
    /// simulator posts, JWS in `--json` output — took far longer appended one Unicode scalar at a time.
    public static func appendString(_ value: String, to out: inout String) {
        var value = value
        if !value.withUTF8(containsEscapable) {
            out += "\""
            out += value
            out += "\""
            return
        }
        var bytes: [UInt8] = []
        appendString(value, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// The same, onto UTF-8 bytes: for writers that build whole documents as bytes (the simulator's answers).
    public static func appendString(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { utf8 in
            out.append(UInt8(ascii: "\""))
            if !containsEscapable(utf8) {
                out.append(contentsOf: utf8)
            } else {
                for byte in utf8 { appendEscaped(byte, to: &out) }
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    private static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out += #"\""#.utf8
        case UInt8(ascii: "\\"): out += #"\\"#.utf8
        case UInt8(ascii: "\n"): out += #"\n"#.utf8
        case UInt8(ascii: "\r"): out += #"\r"#.utf8
        case UInt8(ascii: "\t"): out += #"\t"#.utf8
        case 0..<0x20:
            out += #"\u00"#.utf8
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0xf)])
        default: out.append(byte)
        }
    }

    /// Most strings logged or served — tokens, identifiers, signed payloads — need no escaping and are copied
    /// whole. Checked eight bytes at a time: the simulator serves kilobytes of JWS per answer, and a byte-wise
    /// scan of them was the largest single item of its JSON writing.
    private static func containsEscapable(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        /// Whether some byte of `word` is below `limit` (≤ 0x80); exact as a yes/no answer.
        func hasByteBelow(_ limit: UInt64, _ word: UInt64) -> Bool { (word &- ones &* limit) & ~word & highs != 0 }
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if hasByteBelow(0x20, word) || hasByteBelow(1, word ^ (ones &* 0x22)) || hasByteBelow(1, word ^ (ones &* 0x5c)) {
                return true
            }
            offset += 8
        }
        return bytes[offset...].contains(where: needsEscape)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `value` as a quoted JSON string.
    public static func quoted(_ value: String) -> String {
        var out = ""
        appendString(value, to: &out)
        return out
    }
}

/// A JSON document built from Swift values without Foundation's number and key-order surprises: keys stay
/// in the order written, integers stay integers. What the CLI's `--json` and the API's answers are made of.
public indirect enum JSONValue: Sendable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    /// Already valid JSON text, e.g. a jsonb column.
    case raw(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// A time as every answer writes it: ISO 8601 in UTC with milliseconds (`2026-12-02T13:05:00.000Z`);
    /// `null` for none.
    public static func time(_ date: Date?) -> JSONValue {
        date.map { .string(timestamp($0)) } ?? .null
    }

    /// `date` as ISO 8601 in UTC with milliseconds.
    public static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    private func write(to out: inout String) {
        switch self {
        case .string(let s): JSON.appendString(s, to: &out)
        case .int(let i): out += String(i)
        case .double(let d): out += d.isFinite ? String(d) : "null"
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .raw(let json): out += json
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { out += "," }
                JSON.appendString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }
}
