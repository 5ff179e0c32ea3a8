import Foundation
import HTTP

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
        guard query.utf8.count <= Self.maxLength, let items = PercentEncoding.decodeForm(query.utf8) else { return nil }
        self.items = items
    }

    func values(_ name: String) -> [String] { items.filter { $0.name == name }.map(\.value) }

    /// The value of a parameter that may appear once; `nil` when absent; repeating it is `error`.
    func single(_ name: String, or error: AppleAPIError) throws(AppleAPIError) -> String? {
        let found = values(name)
        guard found.count <= 1 else { throw error }
        return found.first
    }
}
