import Foundation

/// Why a JSON document was refused, and where: `path` names the known field whose value was wrong (outermost
/// key first, `[n]` for an array's element), `offset` the byte at which the syntax broke.
public struct JSONReaderError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Not JSON: a syntax error, invalid UTF-8, a control character in a string, nesting too deep.
        public static let malformed = Code("malformed")
        /// Valid JSON, but a known field holds the wrong kind of value or a number it cannot hold exactly.
        public static let invalidValue = Code("invalid value")
        /// A required field is absent (or null).
        public static let missingField = Code("missing field")
    }

    public let code: Code
    public let reason: String
    public let offset: Int
    /// Keys from the document's top level down to the field at fault, with `[n]` for the nth element (from 0)
    /// of an array on the way: `lineItems[0].expiryTime` is `["lineItems", "[0]", "expiryTime"]`.
    public var path: [String]

    public init(_ code: Code, _ reason: String, offset: Int, path: [String] = []) {
        self.code = code
        self.reason = reason
        self.offset = offset
        self.path = path
    }

    public var description: String {
        let field = path.reduce(into: "") { field, step in
            field += field.isEmpty || step.hasPrefix("[") ? step : "." + step
        }
        switch code {
        case .malformed: return "malformed JSON at byte \(offset): \(reason)"
        case .missingField: return "missing \(field)"
        default: return field.isEmpty ? reason : "bad \(field): \(reason)"
        }
    }
}

/// One object key as it appears in the document (escapes resolved), matched against field names with
/// `case "name":` in a `switch`, without making a `String` of it.
public struct JSONKey: CustomStringConvertible {
    public let bytes: UnsafeBufferPointer<UInt8>

    public static func ~= (name: StaticString, key: JSONKey) -> Bool {
        name.withUTF8Buffer { name in
            name.count == key.bytes.count && (name.isEmpty || memcmp(name.baseAddress!, key.bytes.baseAddress!, name.count) == 0)
        }
    }

    public var description: String { String(decoding: bytes, as: UTF8.self) }
}

/// The kinds of JSON value (`JSONReader.peekKind`).
public enum JSONValueKind: String, Sendable {
    case string, number, bool = "boolean", null, object, array
}

/// A strict JSON (RFC 8259) reader that walks a UTF-8 document value by value, for the signed payloads decoded
/// on every notification and both stores' API answers: Foundation's `JSONDecoder` builds a map of the whole
/// document and boxes every value before a model sees it, which cost about a sixth of a warm-cache verification
/// (and some 14 % of StoreSync's CPU per Google notification).
///
/// The caller reads the values it knows and skips the rest; whatever it reads or skips is checked in full —
/// UTF-8, escapes (surrogates paired), no control characters in strings, the number grammar, nesting at most
/// `maxDepth` — and nothing but whitespace may follow the document. Integers are exact: a number is read as an
/// integer only when its value is one and fits, whatever its notation (`17e11` is `1700000000000`, `4.99` is
/// refused). Duplicate keys are handed over each time, so the last one wins. `null` reads as absent.
public struct JSONReader {
    /// Apple's payloads nest three levels deep, Google's answers six; anything far deeper is not one of them.
    public static let maxDepth = 32

    private let bytes: UnsafeBufferPointer<UInt8>
    /// The byte the reader is at: after `peekKind`, the first byte of the next value (for errors about it).
    private(set) var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads `bytes` as one document whose value `read` consumes; only whitespace may surround it.
    public static func read<T>(_ bytes: UnsafeBufferPointer<UInt8>, _ read: (inout JSONReader) throws -> T) throws -> T {
        var reader = JSONReader(bytes)
        let value = try read(&reader)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.malformed("unexpected data after the JSON value") }
        return value
    }

    public static func read<T>(_ data: Data, _ read: (inout JSONReader) throws -> T) throws -> T {
        try data.withUnsafeBytes { bytes in
            try bytes.withMemoryRebound(to: UInt8.self) { try Self.read($0, read) }
        }
    }

    // MARK: Values

    /// Reads an object, handing each key to `field`, which must read or skip that key's value.
    public mutating func readObject(_ field: (inout JSONReader, JSONKey) throws -> Void) throws {
        guard try peekValue() == UInt8(ascii: "{") else { throw mismatch(expected: "an object") }
        try enterContainer()
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw malformed("expected a string key") }
            let key = try scanString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw malformed("expected ':' after a key") }
            index += 1
            if key.escaped {
                try unescape(key.content).withUnsafeBufferPointer { try readMember(JSONKey(bytes: $0), field) }
            } else {
                try readMember(JSONKey(bytes: UnsafeBufferPointer(rebasing: bytes[key.content])), field)
            }
            skipWhitespace()
            guard index < bytes.count else { throw malformed("unterminated object") }
            let separator = bytes[index]
            index += 1
            if separator == UInt8(ascii: "}") { break }
            guard separator == UInt8(ascii: ",") else {
                index -= 1
                throw malformed("expected ',' or '}' after an object member")
            }
        }
        depth -= 1
    }

    private mutating func readMember(_ key: JSONKey, _ field: (inout JSONReader, JSONKey) throws -> Void) throws {
        do {
            try field(&self, key)
        } catch var error as JSONReaderError where error.code != .malformed {
            error.path.insert(key.description, at: 0)
            throw error
        }
    }

    /// A string, or nil for `null`.
    public mutating func readString() throws -> String? {
        if try readNull() { return nil }
        guard bytes[index] == UInt8(ascii: "\"") else { throw mismatch(expected: "a string") }
        let string = try scanString()
        if string.escaped { return String(decoding: try unescape(string.content), as: UTF8.self) }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[string.content]), as: UTF8.self)
    }

    /// A string that `parse` makes a value of, or nil for `null`: for values JSON carries as text (times, decimal
    /// integers). Another kind of value, or a string `parse` refuses, is an invalid value: `expected` says what it
    /// should have been (`"an RFC 3339 time"`).
    public mutating func readString<T>(expected: String, _ parse: (String) -> T?) throws -> T? {
        if try readNull() { return nil }
        guard bytes[index] == UInt8(ascii: "\"") else { throw mismatch(expected: expected) }
        let start = index
        guard let string = try readString(), let value = parse(string) else {
            throw invalid("expected \(expected), found \(text(start..<index))", at: start)
        }
        return value
    }

    /// An integer that fits Int64 exactly, or nil for `null`.
    public mutating func readInt64() throws -> Int64? {
        if try readNull() { return nil }
        guard bytes[index] == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
            throw mismatch(expected: "an integer")
        }
        let start = index
        let number = try scanNumber()
        switch number.integerValue(in: bytes) {
        case .value(let value): return value
        case .fraction: throw invalid("expected an integer, found \(text(start..<index))", at: start)
        case .outOfRange: throw invalid("\(text(start..<index)) is out of the 64-bit integer range", at: start)
        }
    }

    /// An integer that fits `Int` exactly, or nil for `null`.
    public mutating func readInt() throws -> Int? {
        let start = index
        guard let value = try readInt64() else { return nil }
        guard let int = Int(exactly: value) else { throw invalid("\(value) is out of the integer range", at: start) }
        return int
    }

    /// A number as the nearest `Double`, or nil for `null`: for values that may carry a fraction (a JWT's
    /// NumericDate), never for money or identifiers. One beyond `Double`'s range is refused, not made infinite.
    public mutating func readDouble() throws -> Double? {
        if try readNull() { return nil }
        guard bytes[index] == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
            throw mismatch(expected: "a number")
        }
        let start = index
        _ = try scanNumber()
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw invalid("\(self.text(start..<index)) is out of the floating-point range", at: start)
        }
        return value
    }

    /// `true` or `false`, or nil for `null`.
    public mutating func readBool() throws -> Bool? {
        if try readNull() { return nil }
        switch bytes[index] {
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return true
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return false
        default:
            throw mismatch(expected: "a boolean")
        }
    }

    /// What kind of value comes next, without consuming it: for readers of documents that people write (API
    /// requests), which must say "must be a string" rather than fail on the first unexpected type.
    public mutating func peekKind() throws -> JSONValueKind {
        switch try peekValue() {
        case UInt8(ascii: "\""): .string
        case UInt8(ascii: "{"): .object
        case UInt8(ascii: "["): .array
        case UInt8(ascii: "t"), UInt8(ascii: "f"): .bool
        case UInt8(ascii: "n"): .null
        default: .number
        }
    }

    /// A string, or nil for any other value, which is skipped (and checked as strictly as a read value).
    public mutating func readStringIfPresent() throws -> String? {
        try peekValue() == UInt8(ascii: "\"") ? readString() : { try skipValue(); return nil }()
    }

    /// nil for `null`, otherwise what `read` makes of the value.
    public mutating func readOptional<T>(_ read: (inout JSONReader) throws -> T) throws -> T? {
        if try readNull() { return nil }
        return try read(&self)
    }

    /// Consumes the next value, whatever it is, checking it as strictly as a value that is read.
    public mutating func skipValue() throws {
        switch try peekValue() {
        case UInt8(ascii: "{"):
            try readObject { reader, _ in try reader.skipValue() }
        case UInt8(ascii: "["):
            try readArray { try $0.skipValue() }
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "t"):
            try expectLiteral("true")
        case UInt8(ascii: "f"):
            try expectLiteral("false")
        case UInt8(ascii: "n"):
            try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try scanNumber()
        default:
            throw malformed("unexpected character \(describe(bytes[index]))")
        }
    }

    /// Reads an array, calling `element` for each element, which must read or skip it. An element's error names
    /// it in the path, so on-call finds the field at fault without the document.
    public mutating func readArray(_ element: (inout JSONReader) throws -> Void) throws {
        guard try peekValue() == UInt8(ascii: "[") else { throw mismatch(expected: "an array") }
        try enterContainer()
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return
        }
        var position = 0
        while true {
            do {
                try element(&self)
            } catch var error as JSONReaderError where error.code != .malformed {
                error.path.insert("[\(position)]", at: 0)
                throw error
            }
            position += 1
            skipWhitespace()
            guard index < bytes.count else { throw malformed("unterminated array") }
            let separator = bytes[index]
            index += 1
            if separator == UInt8(ascii: "]") { break }
            guard separator == UInt8(ascii: ",") else {
                index -= 1
                throw malformed("expected ',' or ']' after an array element")
            }
        }
        depth -= 1
    }

    // MARK: Tokens

    /// Consumes `null` if it comes next; otherwise leaves the reader at the value's first byte.
    private mutating func readNull() throws -> Bool {
        guard try peekValue() == UInt8(ascii: "n") else { return false }
        try expectLiteral("null")
        return true
    }

    /// The first byte of the next value, after whitespace.
    private mutating func peekValue() throws -> UInt8 {
        skipWhitespace()
        guard index < bytes.count else { throw malformed("unexpected end of input, expected a value") }
        return bytes[index]
    }

    private mutating func enterContainer() throws {
        guard depth < Self.maxDepth else { throw malformed("nesting deeper than \(Self.maxDepth) levels") }
        depth += 1
        index += 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        guard startsWith(literal) else { throw malformed("invalid literal, expected \(literal)") }
        index += literal.utf8CodeUnitCount
    }

    private func startsWith(_ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { literal in
            bytes.count - index >= literal.count && memcmp(bytes.baseAddress! + index, literal.baseAddress!, literal.count) == 0
        }
    }

    /// Checks the string starting at the opening quote and moves past its closing quote. `content` lies between
    /// the quotes; `escaped` says whether it holds a backslash escape (and must go through `unescape`).
    private mutating func scanString() throws -> (content: Range<Int>, escaped: Bool) {
        index += 1
        let start = index
        var escaped = false
        while true {
            skipPlainASCII()
            guard index < bytes.count else { throw malformed("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return (start..<(index - 1), escaped)
            case UInt8(ascii: "\\"):
                escaped = true
                index += try escape(at: index).length
            case 0..<0x20:
                throw malformed("control character \(describe(byte)) in a string")
            case 0x20..<0x80:
                index += 1
            default:
                try scanUTF8Sequence()
            }
        }
    }

    /// Skips 8 bytes at a time while none is a quote, a backslash, a control character or non-ASCII: the bulk
    /// of a payload is the nested signed tokens, long runs of base64url.
    private mutating func skipPlainASCII() {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        guard let base = bytes.baseAddress else { return }
        var position = index
        defer { index = position }
        while bytes.count - position >= 8 {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            // A byte is zero (or, for `word`, below 0x20) exactly when subtracting borrows into its high bit.
            let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (word &- ones &* 0x20) | word
            guard special & highBits == 0 else { return }
            position += 8
        }
    }

    /// The escape at `position` (its backslash): the scalar it stands for and its length in bytes. `\u`
    /// escapes must be scalar values; surrogates only as a high-low pair.
    private func escape(at position: Int) throws -> (scalar: Unicode.Scalar, length: Int) {
        guard position + 1 < bytes.count else { throw malformed("unterminated string") }
        let simple: Unicode.Scalar
        switch bytes[position + 1] {
        case UInt8(ascii: "\""): simple = "\""
        case UInt8(ascii: "\\"): simple = "\\"
        case UInt8(ascii: "/"): simple = "/"
        case UInt8(ascii: "b"): simple = "\u{08}"
        case UInt8(ascii: "f"): simple = "\u{0C}"
        case UInt8(ascii: "n"): simple = "\n"
        case UInt8(ascii: "r"): simple = "\r"
        case UInt8(ascii: "t"): simple = "\t"
        case UInt8(ascii: "u"):
            let unit = try hexEscape(at: position)
            switch unit {
            case 0xD800...0xDBFF:
                let followedByEscape = position + 12 <= bytes.count && bytes[position + 6] == UInt8(ascii: "\\")
                    && bytes[position + 7] == UInt8(ascii: "u")
                let low = try followedByEscape ? hexEscape(at: position + 6) : 0
                guard (0xDC00...0xDFFF).contains(low) else { throw unpaired(unit, at: position) }
                let value = 0x10000 + (UInt32(unit) - 0xD800) << 10 + (UInt32(low) - 0xDC00)
                return (Unicode.Scalar(value)!, 12)  // U+10000...U+10FFFF, never a surrogate
            case 0xDC00...0xDFFF:
                throw unpaired(unit, at: position)
            default:
                return (Unicode.Scalar(unit)!, 6)  // not a surrogate
            }
        default:
            throw JSONReaderError(.malformed, "invalid escape \\\(describe(bytes[position + 1]))", offset: position)
        }
        return (simple, 2)
    }

    private func unpaired(_ unit: UInt16, at position: Int) -> JSONReaderError {
        JSONReaderError(.malformed, "unpaired surrogate \\u\(String(unit, radix: 16, uppercase: true))", offset: position)
    }

    /// The code unit of the `\uXXXX` escape at `position`.
    private func hexEscape(at position: Int) throws -> UInt16 {
        var unit: UInt16 = 0
        for offset in 2..<6 {
            guard position + offset < bytes.count else { throw malformed("unterminated string") }
            let byte = bytes[position + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONReaderError(.malformed, "invalid \\u escape", offset: position)
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    /// Checks the multi-byte UTF-8 sequence at `index` (Unicode table 3-7: no overlong forms, no surrogates,
    /// nothing above U+10FFFF) and moves past it.
    private mutating func scanUTF8Sequence() throws {
        let lead = bytes[index]
        let length: Int
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; second = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; second = 0x80...0x9F
        case 0xF0: length = 4; second = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; second = 0x80...0x8F
        default: throw malformed("invalid UTF-8")
        }
        guard index + length <= bytes.count, second.contains(bytes[index + 1]) else { throw malformed("invalid UTF-8") }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) {
            throw malformed("invalid UTF-8")
        }
        index += length
    }

    /// The UTF-8 of string content that `scanString` has checked, escapes resolved.
    private func unescape(_ content: Range<Int>) throws -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(content.count)
        var position = content.lowerBound
        while position < content.upperBound {
            guard bytes[position] == UInt8(ascii: "\\") else {
                out.append(bytes[position])
                position += 1
                continue
            }
            let (scalar, length) = try escape(at: position)
            UTF8.encode(scalar) { out.append($0) }
            position += length
        }
        return out
    }

    /// Checks the number at `index` against the JSON grammar and moves past it.
    private mutating func scanNumber() throws -> JSONNumber {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integer = scanDigits()
        guard !integer.isEmpty else { throw malformed("a number needs digits") }
        guard integer.count == 1 || bytes[integer.lowerBound] != UInt8(ascii: "0") else {
            throw JSONReaderError(.malformed, "a number must not have leading zeros", offset: start)
        }
        var fraction = index..<index
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            fraction = scanDigits()
            guard !fraction.isEmpty else { throw malformed("a number needs digits after '.'") }
        }
        var exponent = 0
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            var negative = false
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                negative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            let digits = scanDigits()
            guard !digits.isEmpty else { throw malformed("a number needs digits in its exponent") }
            for position in digits {
                // Past a million, the value is zero, a fraction or out of any integer range anyway.
                exponent = min(exponent * 10 + Int(bytes[position] - UInt8(ascii: "0")), 1_000_000)
            }
            if negative { exponent = -exponent }
        }
        return JSONNumber(negative: bytes[start] == UInt8(ascii: "-"), integer: integer, fraction: fraction,
                          exponent: exponent)
    }

    private mutating func scanDigits() -> Range<Int> {
        let start = index
        while index < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return start..<index
    }

    // MARK: Errors

    private func malformed(_ reason: String) -> JSONReaderError {
        JSONReaderError(.malformed, reason, offset: index)
    }

    private func invalid(_ reason: String, at offset: Int) -> JSONReaderError {
        JSONReaderError(.invalidValue, reason, offset: offset)
    }

    /// The value at `index` is valid JSON's first byte but not what the field takes (or not JSON at all).
    public func mismatch(expected: String) -> JSONReaderError {
        let found = switch bytes[index] {
        case UInt8(ascii: "{"): "an object"
        case UInt8(ascii: "["): "an array"
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): "a number"
        case _ where startsWith("true") || startsWith("false"): "a boolean"
        case _ where startsWith("null"): "null"
        default: nil as String?
        }
        guard let found else { return malformed("unexpected character \(describe(bytes[index]))") }
        return invalid("expected \(expected), found \(found)", at: index)
    }

    /// Document text for a message, cut short: it may be anything up to the payload's size.
    private func text(_ range: Range<Int>) -> String {
        let shown = String(decoding: UnsafeBufferPointer(rebasing: bytes[range.prefix(24)]), as: UTF8.self)
        return range.count > 24 ? shown + "…" : shown
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x\(String(byte, radix: 16, uppercase: true))"
    }
}

/// A number's parts as written (digit ranges in the document), so its exact value can be judged without
/// going through floating point.
private struct JSONNumber {
    enum Integer {
        case value(Int64)
        case fraction
        case outOfRange
    }

    let negative: Bool
    let integer: Range<Int>
    let fraction: Range<Int>
    let exponent: Int

    /// The value as an integer: digits × 10^(exponent − fraction digits), exactly.
    func integerValue(in bytes: UnsafeBufferPointer<UInt8>) -> Integer {
        let count = integer.count + fraction.count
        func digit(_ position: Int) -> UInt64 {
            let index = position < integer.count ? integer.lowerBound + position : fraction.lowerBound + position - integer.count
            return UInt64(bytes[index] - UInt8(ascii: "0"))
        }
        guard let first = (0..<count).first(where: { digit($0) != 0 }) else { return .value(0) }
        var end = count
        var scale = exponent - fraction.count
        if scale < 0 {
            // Dropping the last -scale digits must drop only zeros.
            guard -scale <= count - first, (count + scale..<count).allSatisfy({ digit($0) == 0 }) else { return .fraction }
            end = count + scale
            scale = 0
        }
        guard end - first + scale <= 19 else { return .outOfRange }
        var magnitude: UInt64 = 0
        for position in first..<end { magnitude = magnitude * 10 + digit(position) }
        for _ in 0..<scale { magnitude *= 10 }
        // 19 digits stay below UInt64.max; Int64 takes up to 2^63 - 1, or 2^63 when negative.
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return .outOfRange }
            return .value(Int64(truncatingIfNeeded: 0 &- magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { return .outOfRange }
        return .value(Int64(magnitude))
    }
}
