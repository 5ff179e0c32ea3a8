import Foundation
import GooglePlay
import StoreModel
import StrictJSON
import Testing

/// Guards `GooglePlayMoney`: Google's `Money` JSON (`units` as an int64 string or a number, `nanos` optional) is read
/// as sent and converts to exact minor units — negative, zero-decimal, three-decimal and the largest amounts
/// included — or fails without guessing.
@Suite("Google Play money")
struct GooglePlayMoneyTests {
    private func decode(_ json: String) throws -> GooglePlayMoney {
        try JSONReader.read(Data(json.utf8), GooglePlayMoney.init(json:))
    }

    @Test("units and nanos convert exactly to minor units", arguments: [
        (#"{"currencyCode":"USD","units":"9","nanos":990000000}"#, Int64(999), "USD"),
        (#"{"currencyCode":"USD","units":9,"nanos":990000000}"#, 999, "USD"),
        (#"{"currencyCode":"USD","nanos":500000000}"#, 50, "USD"),
        (#"{"currencyCode":"USD"}"#, 0, "USD"),
        (#"{"currencyCode":"USD","units":"-1","nanos":-750000000}"#, -175, "USD"),
        (#"{"currencyCode":"USD","units":"0","nanos":-10000000}"#, -1, "USD"),
        (#"{"currencyCode":"JPY","units":"1200"}"#, 1200, "JPY"),
        (#"{"currencyCode":"KWD","units":"3","nanos":"125000000"}"#, 3125, "KWD"),
        (#"{"currencyCode":"EUR","units":"1","nanos":5000000}"#, 101, "EUR"),
        (#"{"currencyCode":"USD","units":"92233720368547758","nanos":70000000}"#, Int64.max, "USD"),
        (#"{"currencyCode":"USD","units":"-92233720368547758","nanos":-80000000}"#, Int64.min, "USD"),
        (#"{"currencyCode":"JPY","units":"9223372036854775807"}"#, Int64.max, "JPY"),
    ])
    func exact(json: String, minorUnits: Int64, currency: String) throws {
        #expect(try decode(json).money() == Money(minorUnits: minorUnits, currency: currency))
    }

    @Test("amounts that are not exact money are refused", arguments: [
        (#"{"units":"9"}"#, "currencyCode"),
        (#"{"currencyCode":"usd","units":"9"}"#, "ISO 4217"),
        (#"{"currencyCode":"USD","units":"1","nanos":-5}"#, "sign"),
        (#"{"currencyCode":"USD","units":"92233720368547759"}"#, "out of range"),
        (#"{"currencyCode":"USD","units":"92233720368547758","nanos":80000000}"#, "out of range"),
    ])
    func refused(json: String, fragment: String) throws {
        let error = #expect(throws: MoneyError.self) { try decode(json).money() }
        #expect(error?.description.contains(fragment) == true, "\(error?.description ?? "")")
    }

    @Test("values that are not integers do not decode, and the message names the field", arguments: [
        (#"{"currencyCode":"USD","units":"9.99"}"#, "bad units: expected an integer (Int64) as a decimal string"),
        (#"{"currencyCode":"USD","units":9.99}"#, "bad units: expected an integer, found 9.99"),
        (#"{"currencyCode":"USD","units":"nine"}"#, #"found "nine""#),
        (#"{"currencyCode":"USD","units":"99999999999999999999"}"#, "bad units"),
        (#"{"currencyCode":"USD","nanos":"3000000000"}"#, "bad nanos: expected an integer (Int32)"),
        (#"{"currencyCode":"USD","nanos":3000000000}"#, "bad nanos: 3000000000 is out of the Int32 range"),
        (#"{"currencyCode":"USD","units":true}"#, "bad units: expected an integer or a decimal string, found a boolean"),
        (#"{"currencyCode":7}"#, "bad currencyCode: expected a string, found a number"),
    ])
    func notIntegers(json: String, message: String) {
        let error = #expect(throws: JSONReaderError.self) { try decode(json) }
        #expect(error?.description.contains(message) == true, "\(error.map(String.init(describing:)) ?? "accepted")")
    }
}
