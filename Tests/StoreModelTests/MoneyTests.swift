import StoreModel
import Testing

@Suite struct MoneyTests {
    @Test(arguments: [
        (Int64(9_990), "USD", Int64(999)),
        (Int64(1_000_000), "JPY", Int64(1_000)),
        (Int64(1_234), "BHD", Int64(1_234)),
        (Int64(4_990), "EUR", Int64(499)),
        (Int64(0), "USD", Int64(0)),
        (Int64(9_995), "USD", Int64(1_000)),
        (Int64(-9_995), "USD", Int64(-1_000)),
        (Int64(500), "JPY", Int64(1)),
        (Int64(499), "JPY", Int64(0)),
    ])
    func milliunits(milli: Int64, currency: String, minor: Int64) throws {
        #expect(try Money.fromMilliunits(milli, currency: currency) == Money(minorUnits: minor, currency: currency))
    }

    @Test(arguments: [
        (Int64(4), Int32(990_000_000), "USD", Int64(499)),
        (Int64(1_200), Int32(0), "JPY", Int64(1_200)),
        (Int64(1), Int32(234_000_000), "KWD", Int64(1_234)),
        (Int64(-4), Int32(-990_000_000), "USD", Int64(-499)),
        (Int64(0), Int32(5_000_000), "USD", Int64(1)),
    ])
    func unitsAndNanos(units: Int64, nanos: Int32, currency: String, minor: Int64) throws {
        #expect(try Money.fromUnits(units, nanos: nanos, currency: currency) == Money(minorUnits: minor, currency: currency))
    }

    @Test func rejectsWhatCannotBeExact() {
        #expect(throws: MoneyError.self) { try Money.fromMilliunits(1, currency: "usd") }
        #expect(throws: MoneyError.self) { try Money.fromMilliunits(1, currency: "US") }
        #expect(throws: MoneyError.self) { try Money.fromUnits(1, nanos: -5, currency: "USD") }
        #expect(throws: MoneyError.self) { try Money.fromUnits(.max, nanos: 0, currency: "USD") }
        #expect(throws: MoneyError.self) { try Money(minorUnits: 100, currency: "USD").share(percentMilli: 100_001) }
    }

    @Test(arguments: [(Int64(999), Int64(50_000), Int64(500)), (Int64(999), Int64(100_000), Int64(999)),
                      (Int64(1_000), Int64(33_333), Int64(333)), (Int64(999), Int64(0), Int64(0))])
    func shares(amount: Int64, percentMilli: Int64, expected: Int64) throws {
        #expect(try Money(minorUnits: amount, currency: "USD").share(percentMilli: percentMilli).minorUnits == expected)
    }

    @Test func describesWithTheCurrencysDigits() {
        #expect(Money(minorUnits: 999, currency: "USD").description == "9.99 USD")
        #expect(Money(minorUnits: -5, currency: "EUR").description == "-0.05 EUR")
        #expect(Money(minorUnits: 1_200, currency: "JPY").description == "1200 JPY")
        #expect(Money(minorUnits: 1_234, currency: "KWD").description == "1.234 KWD")
    }
}
