/// An exact amount: integer minor units of an ISO 4217 currency (cents for USD, yen for JPY, fils for
/// BHD). Stores report milliunits (Apple) or units + nanos (Google); both convert here, never through
/// floating point.
public struct Money: Sendable, Hashable, Codable, CustomStringConvertible {
    public let minorUnits: Int64
    public let currency: String

    public init(minorUnits: Int64, currency: String) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    /// Digits after the decimal point of `currency`: 0 for JPY-like currencies, 3 for the dinar family, 2
    /// otherwise (ISO 4217).
    public static func exponent(of currency: String) -> Int {
        if zeroDecimalCurrencies.contains(currency) { return 0 }
        if threeDecimalCurrencies.contains(currency) { return 3 }
        return 2
    }

    /// Converts Apple's milliunits (price × 1000). A remainder below one minor unit is rounded half away
    /// from zero, which only happens for prices no storefront charges.
    public static func fromMilliunits(_ milliunits: Int64, currency: String) throws(MoneyError) -> Money {
        let code = try validCurrency(currency)
        return Money(minorUnits: try scaled(milliunits, fromDigits: 3, toDigits: exponent(of: code)), currency: code)
    }

    /// Converts Google's `Money` (`units` whole units plus `nanos` billionths, both carrying the sign).
    public static func fromUnits(_ units: Int64, nanos: Int32, currency: String) throws(MoneyError) -> Money {
        let code = try validCurrency(currency)
        guard abs(Int64(nanos)) < 1_000_000_000, units == 0 || nanos == 0 || (units > 0) == (nanos > 0) else {
            throw MoneyError("units \(units) and nanos \(nanos) disagree in sign or nanos out of range")
        }
        let digits = exponent(of: code)
        let (whole, wholeOverflow) = units.multipliedReportingOverflow(by: pow10(digits))
        guard !wholeOverflow else { throw MoneyError("amount \(units) \(code) is out of range") }
        let fraction = try scaled(Int64(nanos), fromDigits: 9, toDigits: digits)
        let (sum, sumOverflow) = whole.addingReportingOverflow(fraction)
        guard !sumOverflow else { throw MoneyError("amount \(units) \(code) is out of range") }
        return Money(minorUnits: sum, currency: code)
    }

    /// `percentMilli` thousandths of a percent of this amount (Apple's `revocationPercentage`: 100000 =
    /// 100 %), rounded half away from zero.
    public func share(percentMilli: Int64) throws(MoneyError) -> Money {
        guard (0...100_000).contains(percentMilli) else { throw MoneyError("percentage \(percentMilli) is outside 0...100000") }
        let (product, overflow) = minorUnits.multipliedReportingOverflow(by: percentMilli)
        guard !overflow else { throw MoneyError("amount \(minorUnits) is out of range for a share") }
        return Money(minorUnits: Money.divideRounded(product, by: 100_000), currency: currency)
    }

    public var description: String { "\(decimal) \(currency)" }

    /// The amount as an exact decimal in major units (`9.99`, `1200` for JPY, `1.250` for BHD): how APIs
    /// show money without a floating-point number a client might round.
    public var decimal: String {
        let digits = Money.exponent(of: currency)
        guard digits > 0 else { return "\(minorUnits)" }
        let scale = Money.pow10(digits)
        let magnitude = minorUnits.magnitude
        let fraction = String(magnitude % UInt64(scale))
        let padded = String(repeating: "0", count: digits - fraction.count) + fraction
        return "\(minorUnits < 0 ? "-" : "")\(magnitude / UInt64(scale)).\(padded)"
    }

    private static func validCurrency(_ currency: String) throws(MoneyError) -> String {
        guard currency.utf8.count == 3, currency.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw MoneyError("currency \(currency.prefix(16).debugDescription) is not an ISO 4217 code")
        }
        return currency
    }

    private static func scaled(_ value: Int64, fromDigits: Int, toDigits: Int) throws(MoneyError) -> Int64 {
        if toDigits >= fromDigits {
            let (result, overflow) = value.multipliedReportingOverflow(by: pow10(toDigits - fromDigits))
            guard !overflow else { throw MoneyError("amount \(value) is out of range") }
            return result
        }
        return divideRounded(value, by: pow10(fromDigits - toDigits))
    }

    private static func divideRounded(_ value: Int64, by divisor: Int64) -> Int64 {
        let quotient = value / divisor
        let remainder = value % divisor
        guard remainder.magnitude * 2 >= divisor.magnitude else { return quotient }
        return value < 0 ? quotient - 1 : quotient + 1
    }

    private static func pow10(_ digits: Int) -> Int64 {
        (0..<digits).reduce(1) { result, _ in result * 10 }
    }

    private static let zeroDecimalCurrencies: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF",
        "XOF", "XPF",
    ]
    private static let threeDecimalCurrencies: Set<String> = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"]
}

/// An amount a store reported that cannot be represented exactly (bad currency, overflow, bad sign).
public struct MoneyError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
