import StoreModel

/// Google's `Money`: whole `units` (an int64, sent as a string) plus `nanos` billionths, both carrying the sign
/// (−1.75 is units −1, nanos −750000000). Kept as sent; `money()` converts it exactly.
public struct GooglePlayMoney: Sendable, Hashable, Decodable {
    public let currencyCode: String?
    public let units: Int64
    public let nanos: Int32

    public init(currencyCode: String?, units: Int64, nanos: Int32 = 0) {
        self.currencyCode = currencyCode
        self.units = units
        self.nanos = nanos
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        currencyCode = try container.decodeIfPresent(String.self, forKey: .currencyCode)
        // proto3 JSON omits zero values: a free order may carry neither.
        units = try container.decodeLenientIfPresent(Int64.self, forKey: .units) ?? 0
        nanos = try container.decodeLenientIfPresent(Int32.self, forKey: .nanos) ?? 0
    }

    /// The amount in the currency's minor units, never through floating point. Throws `MoneyError` without a
    /// currency, with units and nanos of different signs, or out of range.
    public func money() throws(MoneyError) -> Money {
        guard let currencyCode else { throw MoneyError("the amount \(units) has no currencyCode") }
        return try Money.fromUnits(units, nanos: nanos, currency: currencyCode)
    }

    private enum CodingKeys: String, CodingKey {
        case currencyCode, units, nanos
    }
}
