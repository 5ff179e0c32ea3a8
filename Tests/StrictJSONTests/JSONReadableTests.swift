import StrictJSON
import Testing

/// A one-field object, for the list readers' tests.
struct Named: JSONReadable, Equatable, Sendable {
    var name: String?

    init(name: String?) { self.name = name }

    init(json reader: inout JSONReader) throws {
        try reader.readObject { reader, key in
            switch key {
            case "name": name = try reader.readString()
            default: try reader.skipValue()
            }
        }
    }
}

/// Guards the list readers both stores share: arrays of objects and of strings, `null` for the whole list as
/// absent, and a `null` or mistyped element refused as the wrong kind of value (not as broken JSON).
@Suite("JSON list readers")
struct JSONReadableTests {
    @Test("lists of objects and strings read in order; null is an absent list", arguments: [
        (#"[{"name":"a"},{"name":null,"x":[1]},{}]"#, [Named(name: "a"), Named(name: nil), Named(name: nil)] as [Named]?),
        ("[]", []), ("null", nil),
    ])
    func objects(json: String, expected: [Named]?) throws {
        #expect(try readJSON(json) { try $0.readList(Named.self) } == expected)
    }

    @Test("strings read in order; null is an absent list", arguments: [
        (#"["a","b"]"#, ["a", "b"] as [String]?), ("[]", []), ("null", nil),
    ])
    func strings(json: String, expected: [String]?) throws {
        #expect(try readJSON(json) { try $0.readStrings() } == expected)
    }

    @Test("a null or mistyped element is the wrong kind of value", arguments: [
        (#"["a",null]"#, "expected a string, found null"), (#"["a",1]"#, "expected a string, found a number"),
        (#"{}"#, "expected an array, found an object"),
    ])
    func refusedStrings(json: String, reason: String) {
        let error = readFailure(Array(json.utf8)) { try $0.readStrings() }
        #expect(error?.code == .invalidValue)
        #expect(error?.reason == reason, "\(error.map(String.init(describing:)) ?? "accepted")")
    }

    @Test("an element that is not an object is the wrong kind of value")
    func refusedObjects() {
        let error = readFailure(Array(#"[{},"x"]"#.utf8)) { try $0.readList(Named.self) }
        #expect(error?.code == .invalidValue)
        #expect(error?.reason == "expected an object, found a string")
    }
}
