import Foundation
import Postgres
import Testing
import TestSupport

/// Guards the text-format codecs (`PostgresEncodable` / `PostgresDecodable`, `PostgresArray`): every
/// supported Swift value survives a round trip through a real server unchanged, the server reads each
/// parameter as the value we meant, and a cell that cannot be decoded fails with `.decoding` — never a
/// wrong value or a crash.
@Suite("Postgres values")
struct PostgresValueTests {
    // MARK: - Strings

    @Test("String round trip", arguments: [
        "", "plain", "it's", "\"double quoted\"", #"back\slash"#, #"\x41 is not bytea"#, "héllo wörld", "日本語 🎉👩‍👩‍👧",
        "tab\tnew\nline\r\n", "NULL", "{a,b}", "  padded  ", String(repeating: "long ", count: 2000),
    ])
    func stringRoundTrip(_ value: String) async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query("SELECT $1::text, length($1::text)", [value]).first)
            #expect(try row.decode(0, as: String.self) == value)
            // The server counts code points: it received exactly the characters we sent.
            #expect(try row.decode(1, as: Int.self) == value.unicodeScalars.count)
        }
    }

    /// Text cannot hold NUL and libpq would cut the parameter at it; inside an array literal that cut made
    /// the whole statement fail. It arrives as U+FFFD instead, whole, alone or in an array.
    @Test("a NUL in a text parameter arrives as U+FFFD, the rest intact", arguments: ["\0", "bundle \0x", "a\0b\0c"])
    func nulIsReplaced(_ value: String) async throws {
        let expected = value.replacingOccurrences(of: "\0", with: "\u{FFFD}")
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query("SELECT $1::text", [value]).first)
            #expect(try row.decode(0, as: String.self) == expected)
            let elements = try await db.pool.query("SELECT unnest($1::text[])", [PostgresArray([value, "after"])])
                .map { try $0.decode(0, as: String.self) }
            #expect(elements == [expected, "after"])
        }
    }

    // MARK: - Integers

    @Test("Int round trip through bigint", arguments: [Int.min, -1, 0, 1, 42, Int.max])
    func intRoundTrip(_ value: Int) async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query("SELECT $1::int8, $1::int8 = $2::int8", [value, String(value)]).first)
            #expect(try row.decode(0, as: Int.self) == value)
            #expect(try row.decode(1, as: Bool.self))
        }
    }

    @Test("Int64 round trip through bigint", arguments: [Int64.min, Int64.min + 1, -1, 0, 1, Int64.max - 1, Int64.max])
    func int64RoundTrip(_ value: Int64) async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let decoded: Int64 = try await db.pool.scalar("SELECT $1::int8", [value])
            #expect(decoded == value)
        }
    }

    @Test("Int32 round trip through integer", arguments: [Int32.min, -1, 0, 1, Int32.max])
    func int32RoundTrip(_ value: Int32) async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let decoded: Int32 = try await db.pool.scalar("SELECT $1::int4", [value])
            #expect(decoded == value)
        }
    }

    @Test("Bool round trip", arguments: [true, false])
    func boolRoundTrip(_ value: Bool) async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query("SELECT $1::bool, $1::bool::text", [value]).first)
            #expect(try row.decode(0, as: Bool.self) == value)
            #expect(try row.decode(1, as: String.self) == (value ? "true" : "false"))
        }
    }

    @Test("Double decodes from float8 and numeric")
    func doubleDecoding() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query("SELECT 1.5::float8, -0.25::numeric, 'NaN'::float8").first)
            #expect(try row.decode(0, as: Double.self) == 1.5)
            #expect(try row.decode(1, as: Double.self) == -0.25)
            #expect(try row.decode(2, as: Double.self).isNaN)
        }
    }

    // MARK: - bytea

    @Test("Data round trip through bytea", arguments: [
        Data(), Data([0]), Data([0xff]), Data(UInt8.min...UInt8.max), Data("hello".utf8),
        Data(repeating: 0x5c, count: 3), Data(repeating: 0xab, count: 100_000),
    ])
    func dataRoundTrip(_ value: Data) async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query("SELECT $1::bytea, length($1::bytea)", [value]).first)
            #expect(try row.decode(0, as: Data.self) == value)
            #expect(try row.decode(1, as: Int.self) == value.count)
        }
    }

    @Test("Data decodes bytea the server produced")
    func dataFromServer() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query(
                #"SELECT '\x00ff10'::bytea, decode('DEADBEEF', 'hex'), ''::bytea, convert_to('é', 'UTF8')"#).first)
            #expect(try row.decode(0, as: Data.self) == Data([0x00, 0xff, 0x10]))
            #expect(try row.decode(1, as: Data.self) == Data([0xde, 0xad, 0xbe, 0xef]))
            #expect(try row.decode(2, as: Data.self) == Data())
            #expect(try row.decode(3, as: Data.self) == Data("é".utf8))
        }
    }

    // MARK: - timestamptz

    /// Instants and how the server must read them; all exactly representable to the microsecond.
    static let instants: [(seconds: TimeInterval, utc: String)] = [
        (0, "1970-01-01 00:00:00+00"),
        (1_709_210_096.123456, "2024-02-29 12:34:56.123456+00"),
        (1_709_210_096.000001, "2024-02-29 12:34:56.000001+00"),
        (-0.000001, "1969-12-31 23:59:59.999999+00"),
        (-1_000_000_000.654321, "1938-04-24 22:13:19.345679+00"),
        (-2_208_988_800, "1900-01-01 00:00:00+00"),
        (4_102_444_800.25, "2100-01-01 00:00:00.25+00"),
        (253_402_300_799.5, "9999-12-31 23:59:59.5+00"),
    ]

    @Test("Date round trip keeps microseconds", arguments: instants)
    func dateRoundTrip(_ seconds: TimeInterval, _ utc: String) async throws {
        let date = Date(timeIntervalSince1970: seconds)
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query(
                "SELECT $1::timestamptz, $1::timestamptz = $2::timestamptz, $2::timestamptz", [date, utc]).first)
            let decoded = try row.decode(0, as: Date.self)
            #expect(abs(decoded.timeIntervalSince1970 - seconds) < 0.000_001,
                    "sent \(seconds), got back \(decoded.timeIntervalSince1970)")
            #expect(try row.decode(1, as: Bool.self), "the server read \(date.postgresText ?? "NULL") as another instant than \(utc)")
            let fromServer = try row.decode(2, as: Date.self)
            #expect(abs(fromServer.timeIntervalSince1970 - seconds) < 0.000_001,
                    "decoded \(utc) as \(fromServer.timeIntervalSince1970)")
        }
    }

    @Test("Dates beyond timestamptz's range are sent as infinities, never trapping", arguments: [
        (1.7e114, "infinity"), (-1e300, "-infinity"), (9.5e12, "infinity"),
    ] as [(TimeInterval, String)])
    func dateOutOfRange(_ seconds: TimeInterval, _ expected: String) {
        #expect(Date(timeIntervalSince1970: seconds).postgresText == expected)
    }

    @Test("Date decodes server timestamps given in another zone as UTC instants")
    func dateFromOtherZone() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query(
                "SELECT '2024-06-01 12:00:00+02'::timestamptz, '2024-06-01 12:00:00.5-05:30'::timestamptz, now()").first)
            #expect(try row.decode(0, as: Date.self).timeIntervalSince1970 == 1_717_236_000)
            #expect(try row.decode(1, as: Date.self).timeIntervalSince1970 == 1_717_263_000.5)
            let now = try row.decode(2, as: Date.self)
            #expect(abs(now.timeIntervalSinceNow) < 300, "now() decoded as \(now)")
        }
    }

    // MARK: - NULL

    @Test("nil Optional is sent as NULL, and NULL decodes only as an optional")
    func nullHandling() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let none: String? = nil
            let some: Int? = 7
            let row = try #require(try await db.pool.query(
                "SELECT $1::text IS NULL, $1::text, $2::int8", [none, some]).first)
            #expect(try row.decode(0, as: Bool.self))
            #expect(row.text(1) == nil)
            #expect(try row.decodeOptional(1, as: String.self) == nil)
            #expect(try row.decodeOptional(2, as: Int.self) == 7)
            let error = #expect(throws: PostgresError.self) { try row.decode(1, as: String.self) }
            #expect(error?.code == .decoding)
        }
    }

    // MARK: - Arrays

    @Test("PostgresArray of Int64 unnests in order")
    func int64Array() async throws {
        let values: [Int64] = [Int64.min, -1, 0, 42, 42, Int64.max]
        try await TestDatabase.with(poolSize: 1) { db in
            let rows = try await db.pool.query(
                "SELECT x FROM unnest($1::int8[]) WITH ORDINALITY AS u(x, i) ORDER BY i", [PostgresArray(values)])
            #expect(try rows.map { try $0.decode(0, as: Int64.self) } == values)
            let empty: Int = try await db.pool.scalar(
                "SELECT count(*) FROM unnest($1::int8[])", [PostgresArray([Int64]())])
            #expect(empty == 0)
        }
    }

    @Test("PostgresArray of Data goes in binary and unnests byte for byte, in order", arguments: [
        [Data]([]), [Data()], [Data([0]), Data(UInt8.min...UInt8.max), Data(#"{"a":"\\","b":"}"}"#.utf8)],
        [Data(repeating: 0x22, count: 12_000), Data("é".utf8), Data()],
    ])
    func binaryDataArray(_ values: [Data]) async throws {
        #expect(PostgresArray(values).postgresBinary != nil)
        try await TestDatabase.with(poolSize: 1) { db in
            let rows = try await db.pool.query(
                "SELECT x FROM unnest($1::bytea[]) WITH ORDINALITY AS u(x, i) ORDER BY i", [PostgresArray(values)])
            #expect(try rows.map { try $0.decode(0, as: Data.self) } == values)
            let count: Int = try await db.pool.scalar("SELECT coalesce(cardinality($1::bytea[]), 0)", [PostgresArray(values)])
            #expect(count == values.count)
        }
    }

    @Test("an optional Data is NULL or its bytes; arrays of text types stay text")
    func optionalDataAndTextArrays() async throws {
        #expect(PostgresArray(["a"]).postgresBinary == nil)
        #expect((nil as Data?).postgresBinary == nil)
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query("SELECT $1::bytea IS NULL, $2::bytea",
                                                           [nil as Data?, Data([0, 0x5c, 0xff]) as Data?]).first)
            #expect(try row.decode(0, as: Bool.self))
            #expect(try row.decode(1, as: Data.self) == Data([0, 0x5c, 0xff]))
        }
    }

    /// StoreSync's connections read `bytea` in escape format; a connection set to hex (the server's default) must
    /// read the same bytes.
    @Test("Data decodes the server's bytea in either output format", arguments: ["escape", "hex"])
    func dataInEitherFormat(_ format: String) async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let all = Data(UInt8.min...UInt8.max)
            let row = try #require(try await db.pool.transaction { db in
                try db.query("SET LOCAL bytea_output = '\(format)'")
                return try db.query("SELECT $1::bytea, convert_to('{\"a\": \"\\\\u00e9 é\"}', 'UTF8')", [all]).first
            })
            #expect(try row.decode(0, as: Data.self) == all)
            #expect(try row.decode(1, as: Data.self) == Data(#"{"a": "\\u00e9 é"}"#.utf8))
        }
    }

    @Test("bytea text decodes in either format", arguments: [
        ("", Data()), ("0a1b", Data("0a1b".utf8)), (#"\\"#, Data([0x5c])), (#"\000\377a"#, Data([0, 0xff, 0x61])),
        (#"\x"#, Data()), (#"\x00fF"#, Data([0, 0xff])), (#"a\\x"#, Data(#"a\x"#.utf8)),
    ])
    func byteaText(_ text: String, _ expected: Data) throws {
        #expect(try Data(postgresText: text) == expected)
    }

    @Test("escape-format bytea that is malformed fails to decode",
          arguments: [#"\"#, #"a\9"#, #"\12"#, #"\400"#, #"\08x"#, #"\X00"#])
    func malformedEscapedBytea(_ text: String) {
        #expect(throws: PostgresError.self) { try Data(postgresText: text) }
    }

    @Test("PostgresArray of String survives quotes, commas, backslashes, braces and NULL")
    func stringArray() async throws {
        let values: [String?] = [
            "plain", #"with "quotes""#, "comma,inside", #"back\slash"#, #"\"#, "{braces}", "", "NULL", nil,
            "  padded  ", "日本語", "new\nline",
        ]
        try await TestDatabase.with(poolSize: 1) { db in
            let rows = try await db.pool.query(
                "SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i", [PostgresArray(values)])
            #expect(try rows.map { try $0.decodeOptional(0, as: String.self) } == values)
            let length: Int = try await db.pool.scalar("SELECT cardinality($1::text[])", [PostgresArray(values)])
            #expect(length == values.count)
        }
    }

    // MARK: - Decoding errors

    @Test("Undecodable text fails with .decoding", arguments: [
        ("SELECT 'abc'", "Int"), ("SELECT ''", "Int"), ("SELECT 2147483648::int8", "Int32"),
        ("SELECT 9223372036854775808::numeric", "Int64"), ("SELECT 'yes'", "Bool"), ("SELECT 'abc'", "Double"),
        ("SELECT 'infinity'::timestamptz", "Date"), (#"SELECT 'not \9 bytea'"#, "Data"),
    ])
    func undecodable(_ sql: String, _ type: String) async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query(sql).first)
            let error = #expect(throws: PostgresError.self, "\(sql) decoded as \(type)") {
                switch type {
                case "Int": _ = try row.decode(0, as: Int.self)
                case "Int32": _ = try row.decode(0, as: Int32.self)
                case "Int64": _ = try row.decode(0, as: Int64.self)
                case "Bool": _ = try row.decode(0, as: Bool.self)
                case "Double": _ = try row.decode(0, as: Double.self)
                case "Date": _ = try row.decode(0, as: Date.self)
                case "Data": _ = try row.decode(0, as: Data.self)
                default: Issue.record("no decoder for \(type) in this test")
                }
            }
            #expect(error?.code == .decoding)
        }
    }

    @Test("Out-of-range column index or unknown column name fails with .decoding")
    func missingColumn() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            let row = try #require(try await db.pool.query("SELECT 1 AS one, 2 AS two").first)
            #expect(try row.decode("two", as: Int.self) == 2)
            for attempt in [{ _ = try row.decode(2, as: Int.self) }, { _ = try row.decode("three", as: Int.self) },
                            { _ = try row.decodeOptional("three", as: Int.self) }] as [() throws -> Void] {
                let error = #expect(throws: PostgresError.self) { try attempt() }
                #expect(error?.code == .decoding)
            }
        }
    }

    /// `decode(_:)` checks the index, `decodeOptional(_:)` does not: it traps instead of throwing.
    /// The check runs in a child process so a trap fails this test instead of ending the whole run.
    @Test("decodeOptional with an out-of-range column index throws .decoding instead of trapping")
    func decodeOptionalOutOfRange() async throws {
        try await TestDatabase.with(poolSize: 1) { db in
            _ = await #expect(processExitsWith: .success, "decodeOptional(2) on a two-column row must throw, not trap") {
                [url = db.url as String] in
                let connection = try await PostgresConnection.connect(url: url)
                let rows = try await connection.query("SELECT 1 AS one, 2 AS two UNION ALL SELECT 3, 4")
                do {
                    _ = try rows[0].decodeOptional(2, as: Int.self)
                    throw TestFailure("decodeOptional(2) returned a value")
                } catch let error as PostgresError where error.code == .decoding {
                    await connection.close()
                }
            }
        }
    }

    // MARK: - Pure parsing and formatting

    @Test("Date parses the server's ISO forms", arguments: [
        ("2024-02-29 12:34:56+00", 1_709_210_096.0),
        ("2024-02-29 12:34:56.5+00", 1_709_210_096.5),
        ("2024-02-29 12:34:56.123456+00", 1_709_210_096.123456),
        ("2024-02-29 12:34:56.1234569+00", 1_709_210_096.123456),  // digits beyond microseconds are dropped
        ("2024-02-29 14:34:56+02", 1_709_210_096.0),
        ("2024-02-29 18:04:56+05:30", 1_709_210_096.0),
        ("2024-02-29 04:34:56-08", 1_709_210_096.0),
        ("2024-02-29 12:34:56", 1_709_210_096.0),  // no offset: UTC
        ("1969-12-31 23:59:59.999999+00", -0.000001),
        ("1900-01-01 00:00:00+00", -2_208_988_800.0),
        ("9999-12-31 23:59:59.5+00", 253_402_300_799.5),
    ])
    func dateParsing(_ text: String, _ seconds: TimeInterval) throws {
        let date = try Date(postgresText: text)
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001, "\(text) parsed as \(date.timeIntervalSince1970)")
    }

    @Test("Date rejects what is not a timestamp", arguments: ["", "2024-02-29", "infinity", "-infinity", "yesterday",
                                                               "2024-02-29 12:34", "20x4-02-29 12:34:56+00"])
    func dateRejects(_ text: String) {
        let error = #expect(throws: PostgresError.self) { try Date(postgresText: text) }
        #expect(error?.code == .decoding)
    }

    @Test("Date formats whole microseconds in UTC", arguments: [
        (0.0, "1970-01-01 00:00:00.000000+00"),
        (-0.000001, "1969-12-31 23:59:59.999999+00"),
        (-1.5, "1969-12-31 23:59:58.500000+00"),
        (0.0000004, "1970-01-01 00:00:00.000000+00"),  // rounds to the nearest microsecond
        (0.0000006, "1970-01-01 00:00:00.000001+00"),
        (1_709_210_096.123456, "2024-02-29 12:34:56.123456+00"),
        (1_709_210_096.9999998, "2024-02-29 12:34:57.000000+00"),  // rounding carries into the seconds
        (253_402_300_799.5, "9999-12-31 23:59:59.500000+00"),
    ])
    func dateFormatting(_ seconds: TimeInterval, _ text: String) {
        #expect(Date(timeIntervalSince1970: seconds).postgresText == text)
    }

    @Test("Data hex decoding accepts upper case and rejects malformed hex")
    func dataParsing() throws {
        #expect(try Data(postgresText: #"\x"#) == Data())
        #expect(try Data(postgresText: #"\xDEADbeef"#) == Data([0xde, 0xad, 0xbe, 0xef]))
        #expect(Data([0x00, 0x0f, 0xf0, 0xff]).postgresText == #"\x000ff0ff"#)
        for text in [#"\x0"#, #"\x0g"#, #"\xzz"#, "\\x00\u{e9}"] {
            let error = #expect(throws: PostgresError.self, "\(text.debugDescription) decoded as bytea") {
                try Data(postgresText: text)
            }
            #expect(error?.code == .decoding)
        }
    }

    @Test("Bool accepts both of the server's spellings")
    func boolParsing() throws {
        #expect(try Bool(postgresText: "t") && Bool(postgresText: "true"))
        #expect(try !Bool(postgresText: "f") && !Bool(postgresText: "false"))
        #expect(true.postgresText == "t" && false.postgresText == "f")
    }

    @Test("PostgresArray text form quotes every element and leaves NULL bare")
    func arrayFormatting() {
        #expect(PostgresArray([Int64]()).postgresText == "{}")
        #expect(PostgresArray([1, 2] as [Int64]).postgresText == #"{"1","2"}"#)
        #expect(PostgresArray([#"a"b"#, #"c\d"#, nil] as [String?]).postgresText == #"{"a\"b","c\\d",NULL}"#)
    }
}
