import StrictJSON
import Foundation
import Testing

/// Reads `bytes` as one document with `body`.
func readJSON<T>(_ bytes: [UInt8], _ body: (inout JSONReader) throws -> T) throws -> T {
    try bytes.withUnsafeBufferPointer { try JSONReader.read($0, body) }
}

func readJSON<T>(_ text: String, _ body: (inout JSONReader) throws -> T) throws -> T {
    try readJSON(Array(text.utf8), body)
}

/// The error reading `bytes` with `body` throws, or nil when it reads.
func readFailure<T>(_ bytes: [UInt8], _ body: (inout JSONReader) throws -> T) -> JSONReaderError? {
    do {
        _ = try readJSON(bytes, body)
        return nil
    } catch {
        return error as? JSONReaderError
    }
}

/// One object's members as text, as the reader hands them over (strings read, everything else skipped).
private func members(_ json: String) throws -> [String] {
    try readJSON(json) { reader in
        var seen: [String] = []
        try reader.readObject { reader, key in
            if key.description.hasPrefix("s") {
                seen.append("\(key)=\(try reader.readString() ?? "null")")
            } else {
                try reader.skipValue()
                seen.append("\(key)")
            }
        }
        return seen
    }
}

/// Guards `JSONReader`, the strict reader every App Store and Google Play document goes through: RFC 8259 strings
/// (escapes, surrogate pairs, UTF-8, no control characters), exact integers whatever their notation, the types
/// known fields take, unknown values skipped but still checked, bounded nesting, and nothing after the document.
@Suite("JSON reader")
struct JSONReaderTests {
    // MARK: Strings

    @Test("strings decode with every escape, surrogate pairs and raw UTF-8", arguments: [
        (#""plain""#, "plain"), (#""""#, ""), (#""a\"b\\c\/d""#, "a\"b\\c/d"), (#""\b\f\n\r\t""#, "\u{08}\u{0C}\n\r\t"),
        (#""\u0041\u00e9\u20AC""#, "Aé€"), (#""\uD83D\uDE00""#, "😀"), (#""\ud83d\ude00 \uDBFF\uDFFF""#, "😀 \u{10FFFF}"),
        (#""\u0000""#, "\u{0}"), ("\"é€😀 raw\"", "é€😀 raw"), (#""\u007f""#, "\u{7F}"),
        ("\"\u{7F}\"", "\u{7F}"), (#""eyJhbGciOiJFUzI1NiJ9.e30.c2ln-_""#, "eyJhbGciOiJFUzI1NiJ9.e30.c2ln-_"),
    ])
    func strings(json: String, expected: String) throws {
        #expect(try readJSON(json) { try $0.readString() } == expected)
    }

    /// The 8-byte fast path must stop exactly at a quote, backslash, control character or non-ASCII byte
    /// wherever it falls in a word.
    @Test("a special byte is found at every offset of a long string", arguments: ["\\\"", "\\n", "é", "\\u00e9", "😀"])
    func specialAtEveryOffset(special: String) throws {
        let decoded = try readJSON("\"\(special)\"") { try $0.readString() }!
        for length in 0..<40 {
            for offset in 0...length {
                let prefix = String(repeating: "a", count: offset), suffix = String(repeating: "b", count: length - offset)
                let value = try readJSON("\"\(prefix)\(special)\(suffix)\"") { try $0.readString() }
                #expect(value == prefix + decoded + suffix, "length \(length), offset \(offset)")
            }
        }
    }

    @Test("malformed strings are refused with the reason", arguments: [
        (Array(#""abc"#.utf8), "unterminated string"), (Array(#""abc\"#.utf8), "unterminated string"),
        (Array(#""\x""#.utf8), "invalid escape \\'x'"), (Array(#""\u12G4""#.utf8), "invalid \\u escape"),
        (Array(#""\u12""#.utf8), "invalid \\u escape"), (Array(#""\u12"#.utf8), "unterminated string"),
        (Array(#""\uD83D""#.utf8), "unpaired surrogate \\uD83D"), (Array(#""\uD83Dx""#.utf8), "unpaired surrogate"),
        (Array(#""\uD83D\u0041""#.utf8), "unpaired surrogate \\uD83D"),
        (Array(#""\uDE00\uD83D""#.utf8), "unpaired surrogate \\uDE00"),
        (Array(#""\uD83D\uD83D""#.utf8), "unpaired surrogate"), (Array(#""\uD83D\n""#.utf8), "unpaired surrogate"),
        ([0x22, 0x01, 0x22], "control character 0x1 in a string"), ([0x22, 0x09, 0x22], "control character 0x9"),
        ([0x22, 0x0A, 0x22], "control character 0xA"), ([0x22, 0x00, 0x22], "control character 0x0"),
        ([0x22, 0xC3, 0x22], "invalid UTF-8"), ([0x22, 0xC3], "invalid UTF-8"), ([0x22, 0xC0, 0x80, 0x22], "invalid UTF-8"),
        ([0x22, 0xE0, 0x80, 0x80, 0x22], "invalid UTF-8"), ([0x22, 0xED, 0xA0, 0x80, 0x22], "invalid UTF-8"),
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], "invalid UTF-8"), ([0x22, 0xF0, 0x80, 0x80, 0x80, 0x22], "invalid UTF-8"),
        ([0x22, 0xE2, 0x82, 0x22], "invalid UTF-8"), ([0x22, 0x80, 0x22], "invalid UTF-8"), ([0x22, 0xFF, 0x22], "invalid UTF-8"),
        ([0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], "invalid UTF-8"),
    ] as [([UInt8], String)])
    func malformedStrings(bytes: [UInt8], reason: String) {
        for body: (inout JSONReader) throws -> Void in [{ _ = try $0.readString() }, { try $0.skipValue() }] {
            let error = readFailure(bytes, body)
            #expect(error?.code == .malformed)
            #expect(error?.description.contains(reason) == true, "\(error.map(String.init(describing:)) ?? "accepted")")
        }
    }

    // MARK: Numbers

    @Test("integers are exact in any notation and within Int64", arguments: [
        ("0", 0), ("-0", 0), ("1", 1), ("-1", -1), ("9223372036854775807", .max), ("-9223372036854775808", .min),
        ("1e3", 1000), ("1E+3", 1000), ("1.5e3", 1500), ("17e11", 1_700_000_000_000), ("1.7e12", 1_700_000_000_000),
        ("1700000000000.000", 1_700_000_000_000), ("100e-2", 1), ("0e999999999", 0), ("0.0", 0), ("-0.0e-5", 0),
        ("9.223372036854775807e18", .max), ("92233720368547758070e-1", .max), ("5000000000990", 5_000_000_000_990),
    ] as [(String, Int64)])
    func integers(text: String, expected: Int64) throws {
        #expect(try readJSON(text) { try $0.readInt64() } == expected)
    }

    @Test("fractions and out-of-range numbers are refused where an integer is required", arguments: [
        ("1.5", "expected an integer, found 1.5"), ("4.99", "found 4.99"), ("1e-1", "found 1e-1"), ("15e-1", "found 15e-1"),
        ("0.1", "found 0.1"), ("1e-999999999999", "found 1e-999999999999"),
        ("1.0000000000000000000000000001", "expected an integer, found 1.0000000000000000000000…"),
        ("9223372036854775808", "9223372036854775808 is out of the 64-bit integer range"),
        ("-9223372036854775809", "out of the 64-bit integer range"), ("1e19", "out of the 64-bit integer range"),
        ("18446744073709551616", "out of the 64-bit integer range"), ("99999999999999999999", "out of the 64-bit"),
        ("9999999999999999999.9e1", "out of the 64-bit"), ("1.7e114", "out of the 64-bit integer range"),
        ("1e999999999999", "out of the 64-bit integer range"), ("100000000000000000000e-1", "out of the 64-bit integer range"),
    ])
    func nonIntegers(text: String, reason: String) {
        let error = readFailure(Array(text.utf8)) { try $0.readInt64() }
        #expect(error?.code == .invalidValue)
        #expect(error?.description.contains(reason) == true, "\(error.map(String.init(describing:)) ?? "accepted")")
    }

    @Test("numbers outside the JSON grammar are malformed, read or skipped", arguments: [
        "01", "-", "-01", "1.", ".5", "+1", "1e", "1e+", "--1", "0x10", "1.e3", "- 1", "Infinity", "NaN", "1e3.5",
    ])
    func malformedNumbers(text: String) {
        for body: (inout JSONReader) throws -> Void in [{ _ = try $0.readInt64() }, { try $0.skipValue() }] {
            #expect(readFailure(Array(text.utf8), body)?.code == .malformed, "\(text)")
        }
    }

    @Test("numbers read as the nearest Double, beyond its range refused", arguments: [
        ("0", 0.0 as Double?), ("-1.5", -1.5), ("1747735200.25", 1_747_735_200.25), ("1e3", 1000), ("null", nil),
        ("1e400", nil), ("-1e400", nil), (#""1""#, nil), ("true", nil),
    ])
    func doubles(text: String, expected: Double?) {
        do {
            #expect(try readJSON(text) { try $0.readDouble() } == expected)
        } catch {
            #expect(expected == nil)
            #expect((error as? JSONReaderError)?.code == .invalidValue, "\(error)")
        }
        #expect(readFailure(Array("1e400".utf8)) { try $0.readDouble() }?.reason == "1e400 is out of the floating-point range")
    }

    // MARK: Types

    enum Kind: String, CaseIterable, Sendable { case string, integer, boolean, object }

    @Test("a value of the wrong type names what was expected and what was found", arguments: [
        (Kind.string, "1", "expected a string, found a number"), (.string, "true", "expected a string, found a boolean"),
        (.string, "{}", "expected a string, found an object"), (.string, "[]", "expected a string, found an array"),
        (.integer, #""1""#, "expected an integer, found a string"), (.integer, "false", "expected an integer, found a boolean"),
        (.boolean, "1", "expected a boolean, found a number"), (.boolean, #""true""#, "expected a boolean, found a string"),
        (.object, "null", "expected an object, found null"), (.object, "[{}]", "expected an object, found an array"),
        (.object, #""{}""#, "expected an object, found a string"),
    ])
    func typeMismatch(kind: Kind, json: String, reason: String) {
        let error = readFailure(Array(json.utf8)) { try Self.read(kind, &$0) }
        #expect(error?.code == .invalidValue)
        #expect(error?.description == reason)
    }

    @Test("null reads as absent for every optional value", arguments: Kind.allCases.filter { $0 != .object })
    func nullIsAbsent(kind: Kind) throws {
        #expect(try readJSON(" null ") { try Self.read(kind, &$0) } == nil)
        #expect(try readJSON("null") { try $0.readOptional { try Self.read(kind, &$0) } } == nil)
    }

    @Test("booleans read as themselves")
    func booleans() throws {
        #expect(try readJSON("true") { try $0.readBool() } == true)
        #expect(try readJSON("false") { try $0.readBool() } == false)
    }

    @Test("misspelt literals are malformed, wherever they are", arguments: ["tru", "True", "nul", "nUll", "fals", "f", "n"])
    func misspeltLiterals(text: String) {
        for kind in Kind.allCases {
            #expect(readFailure(Array(text.utf8)) { try Self.read(kind, &$0) }?.code == .malformed, "\(text) as \(kind)")
        }
        #expect(readFailure(Array("{\"k\":\(text)}".utf8)) { try $0.skipValue() }?.code == .malformed, "\(text) skipped")
    }

    private static func read(_ kind: Kind, _ reader: inout JSONReader) throws -> String? {
        switch kind {
        case .string: return try reader.readString()
        case .integer: return try reader.readInt64().map(String.init)
        case .boolean: return try reader.readBool().map(String.init)
        case .object:
            try reader.readObject { reader, _ in try reader.skipValue() }
            return "{}"
        }
    }

    // MARK: Objects and documents

    @Test("objects hand over every key in order, escaped keys resolved, duplicates each time (the last wins)", arguments: [
        (#"{}"#, []), (#" { } "#, []), (#"{"s":"1"}"#, ["s=1"]), (#"{"s":"1","s":"2"}"#, ["s=1", "s=2"]),
        (#"{"\u0073a":"x","b":1}"#, ["sa=x", "b"]), (#"{"s\"q":"x"}"#, ["s\"q=x"]), (#"{"s":null}"#, ["s=null"]),
        ("{\n\t\"s\" :\r \"v\" ,\"n\": -1.5e-3 }", ["s=v", "n"]),
        (#"{"deep":{"a":[1,2.5,-3e2,true,false,null,"x\u00e9",{"b":[[],{}]}],"c":{}},"s":"after"}"#, ["deep", "s=after"]),
    ] as [(String, [String])])
    func objects(json: String, expected: [String]) throws {
        #expect(try members(json) == expected)
    }

    @Test("malformed objects and arrays are refused, read or skipped", arguments: [
        #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, #"{"a":1 "b":2}"#, #"{"a":1"#, #"{"a":"#, #"{"a""#, #"{"#, #"{,}"#,
        #"{"a":[1,]}"#, #"{"a":[1 2]}"#, #"{"a":[1"#, #"{"a":[,1]}"#, #"{"a":}"#, #"{'a':1}"#, #"{"a":1}}"#,
        #"{"a":[}"#, #"{"a":{]}"#, "{\"a\":\u{1}}", #"{"a"::1}"#, #"{1:1}"#,
    ])
    func malformedContainers(json: String) {
        #expect(readFailure(Array(json.utf8)) { try $0.skipValue() }?.code == .malformed, "\(json)")
        #expect(readFailure(Array(json.utf8)) { try $0.readObject { reader, _ in try reader.skipValue() } }?.code == .malformed,
                "\(json)")
    }

    @Test("only whitespace may follow the document, and there must be one", arguments: [
        (#"{}"#, true), ("{} \n\t\r", true), (" \n{}", true), (#"{} x"#, false), (#"{}{}"#, false), (#"{},"#, false),
        ("", false), ("  ", false), ("{}\u{0}", false), ("\u{FEFF}{}", false), (#"{}""#, false),
    ])
    func wholeDocument(json: String, accepted: Bool) {
        let error = readFailure(Array(json.utf8)) { try $0.readObject { reader, _ in try reader.skipValue() } }
        #expect((error == nil) == accepted, "\(error.map(String.init(describing:)) ?? "accepted")")
        if !accepted { #expect(error?.code == .malformed) }
    }

    @Test("nesting is bounded at 32 levels, counting the document's own object", arguments: [
        (31, true), (32, true), (33, false), (10_000, false),
    ])
    func depthLimit(depth: Int, accepted: Bool) {
        for (open, close) in [("[", "]"), (#"{"k":"#, "}")] {
            let inner = String(repeating: open, count: depth - 1) + "1" + String(repeating: close, count: depth - 1)
            let json = #"{"k":"# + inner + "}"
            let error = readFailure(Array(json.utf8)) { try $0.skipValue() }
            #expect((error == nil) == accepted, "\(depth) × \(open)")
            if !accepted { #expect(error?.description.contains("nesting deeper than 32 levels") == true) }
        }
    }

    @Test("a value at fault inside arrays is named by its keys and element positions")
    func arrayPath() {
        let json = #"{"a":[{"b":[]},{"b":[true,"x"]}]}"#
        let error = readFailure(Array(json.utf8)) { reader in
            try reader.readObject { reader, _ in
                try reader.readArray { reader in
                    try reader.readObject { reader, _ in try reader.readArray { _ = try $0.readBool() } }
                }
            }
        }
        #expect(error?.path == ["a", "[1]", "b", "[1]"])
        #expect(error?.description == "bad a[1].b[1]: expected a boolean, found a string")
        #expect(readFailure(Array("[1,2,[3,true]]".utf8)) { try $0.readArray { try $0.skipValue() } } == nil)
        #expect(readFailure(Array("[1,2,[3,true]]".utf8)) { reader in
            try reader.readArray { reader in
                if try reader.peekKind() == .array { try reader.readArray { _ = try $0.readInt64() } } else { try reader.skipValue() }
            }
        }?.description == "bad [2][1]: expected an integer, found a boolean")
    }

    @Test("a malformed document names the byte where it broke")
    func offsets() {
        #expect(readFailure(Array(#"{"a":1,"b":tru}"#.utf8)) { try $0.skipValue() }?.description
                == "malformed JSON at byte 11: invalid literal, expected true")
        #expect(readFailure(Array(#"{"a":"x\q"}"#.utf8)) { try $0.skipValue() }?.description
                == "malformed JSON at byte 7: invalid escape \\'q'")
    }
}
