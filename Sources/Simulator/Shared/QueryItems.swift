import Foundation

/// A request's query string as name/value pairs in order, percent-decoded (`+` is a space, as in forms).
/// Repeated names are kept: Apple's filters (`status`, `productId`, …) repeat.
struct QueryItems: Sendable {
    static let maxLength = 8 * 1024

    let items: [(name: String, value: String)]

    /// `nil` when the query is too long or not valid percent-encoding.
    init?(_ query: String?) {
        guard let query, !query.isEmpty else {
            items = []
            return
        }
        guard query.utf8.count <= Self.maxLength else { return nil }
        var items: [(name: String, value: String)] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), let value = Self.decode(parts.count > 1 ? parts[1] : "") else { return nil }
            items.append((name, value))
        }
        self.items = items
    }

    func values(_ name: String) -> [String] { items.filter { $0.name == name }.map(\.value) }

    /// The value of a parameter that may appear once; `nil` when absent; repeating it is `error`.
    func single(_ name: String, or error: AppleAPIError) throws(AppleAPIError) -> String? {
        let found = values(name)
        guard found.count <= 1 else { throw error }
        return found.first
    }

    /// Form decoding (`+` is a space) of one name or value; nil for a bad `%` escape or bytes that are not
    /// UTF-8. Byte by byte: Foundation's `removingPercentEncoding` went through CFString on every API call.
    private static func decode(_ text: Substring) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            utf8.formIndex(after: &index)
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != utf8.endIndex, let high = hexValue(utf8[index]) else { return nil }
                utf8.formIndex(after: &index)
                guard index != utf8.endIndex, let low = hexValue(utf8[index]) else { return nil }
                utf8.formIndex(after: &index)
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
