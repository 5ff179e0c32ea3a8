import StrictJSON
import Testing

/// Guards the readers of values JSON carries as text: `readLenientInteger` takes an exact integer as a number or a
/// bounded decimal string, within the target type, and `readString(expected:_:)` refuses what its parser refuses
/// with what it expected and what it found.
@Suite("Lenient integers and parsed strings")
struct LenientIntegerTests {
    @Test("a number or a decimal string reads as the integer", arguments: [
        ("42", Int64(42)), (#""42""#, 42), (#""-7""#, -7), (#""+7""#, 7), ("-7", -7), ("1e3", 1000), ("4.0", 4),
        (#""9223372036854775807""#, .max), (#""-9223372036854775808""#, .min), (#""000000000000000000000042""#, 42),
    ] as [(String, Int64)])
    func accepted(json: String, expected: Int64) throws {
        #expect(try readJSON(json) { try $0.readLenientInteger(Int64.self) } == expected)
    }

    @Test("null is absent")
    func null() throws {
        #expect(try readJSON("null") { try $0.readLenientInteger(Int32.self) } == nil)
    }

    @Test("what is not an exact integer of the type is refused with the reason", arguments: [
        ("4.5", "expected an integer, found 4.5"),
        (#""4.5""#, #"found "4.5""#), (#""four""#, #"found "four""#), (#""""#, #"found """#), (#"" 4""#, #"found " 4""#),
        (#""0x10""#, "found"), (#""1e3""#, "found"),
        (#""0000000000000000000000042""#, "at most 24 bytes, found \"0000"),
        (#""9223372036854775808""#, "expected an integer (Int64) as a decimal string"),
        ("9223372036854775808", "out of the 64-bit integer range"),
        ("true", "expected an integer or a decimal string, found a boolean"),
        ("{}", "expected an integer or a decimal string, found an object"),
        ("[1]", "expected an integer or a decimal string, found an array"),
    ])
    func refused(json: String, reason: String) {
        let error = readFailure(Array(json.utf8)) { try $0.readLenientInteger(Int64.self) }
        #expect(error?.code == .invalidValue)
        #expect(error?.reason.contains(reason) == true, "\(error.map(String.init(describing:)) ?? "accepted")")
    }

    @Test("the value must fit the type asked for", arguments: [
        ("3000000000", "3000000000 is out of the Int32 range"), (#""3000000000""#, #"found "3000000000""#),
        ("-2147483649", "out of the Int32 range"),
    ])
    func range(json: String, reason: String) throws {
        #expect(try readJSON("2147483647") { try $0.readLenientInteger(Int32.self) } == .max)
        #expect(try readJSON(#""-2147483648""#) { try $0.readLenientInteger(Int32.self) } == .min)
        let error = readFailure(Array(json.utf8)) { try $0.readLenientInteger(Int32.self) }
        #expect(error?.reason.contains(reason) == true, "\(error.map(String.init(describing:)) ?? "accepted")")
    }

    @Test("a lenient field at fault is named by its path")
    func path() {
        let error = readFailure(Array(#"{"a":[{"n":1},{"n":"x"}]}"#.utf8)) { reader in
            try reader.readObject { reader, _ in
                try reader.readArray { reader in
                    try reader.readObject { reader, _ in _ = try reader.readLenientInteger(Int.self) }
                }
            }
        }
        #expect(error?.path == ["a", "[1]", "n"])
        #expect(error?.description.hasPrefix("bad a[1].n: expected an integer (Int) as a decimal string") == true,
                "\(error.map(String.init(describing:)) ?? "accepted")")
    }

    @Test("a parsed string is what the parser makes of it; other values and refused strings say what was expected",
          arguments: [
              (#""yes""#, true as Bool?, nil as String?), ("null", nil, nil),
              (#""maybe""#, nil, #"expected yes or no, found "maybe""#), ("1", nil, "expected yes or no, found a number"),
          ])
    func parsedString(json: String, value: Bool?, reason: String?) {
        let parse = { (text: String) -> Bool? in text == "yes" ? true : text == "no" ? false : nil }
        do {
            #expect(try readJSON(json) { try $0.readString(expected: "yes or no", parse) } == value)
            #expect(reason == nil)
        } catch {
            #expect((error as? JSONReaderError)?.reason == reason)
        }
    }
}
