import StoreModel
import StrictJSON

/// Google's `Money`: whole `units` (an int64, sent as a string) plus `nanos` billionths, both carrying the sign
/// (−1.75 is units −1, nanos −750000000). Kept as sent; `money()` converts it exactly.
public struct GooglePlayMoney: Sendable, Hashable, JSONReadable {
    public private(set) var currencyCode: String?
    public private(set) var units: Int64 = 0
    public private(set) var nanos: Int32 = 0

    public init(currencyCode: String?, units: Int64, nanos: Int32 = 0) {
        self.currencyCode = currencyCode
        self.units = units
        self.nanos = nanos
    }

    /// Reads `units` as a number or a decimal string, `nanos` likewise; proto3 JSON omits zero values, so a free
    /// order may carry neither.
    public init(json reader: inout JSONReader) throws {
        try reader.readObject { reader, key in
            switch key {
            case "currencyCode": currencyCode = try reader.readString()
            case "units": units = try reader.readLenientInteger(Int64.self) ?? 0
            case "nanos": nanos = try reader.readLenientInteger(Int32.self) ?? 0
            default: try reader.skipValue()
            }
        }
    }

    /// The amount in the currency's minor units, never through floating point. Throws `MoneyError` without a
    /// currency, with units and nanos of different signs, or out of range.
    public func money() throws(MoneyError) -> Money {
        guard let currencyCode else { throw MoneyError("the amount \(units) has no currencyCode") }
        return try Money.fromUnits(units, nanos: nanos, currency: currencyCode)
    }
}
