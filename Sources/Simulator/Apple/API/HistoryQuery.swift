import Crypto
import Foundation

/// The parameters of Get Transaction History v2, validated with Apple's error codes, and the revision
/// token that pages through it.
struct HistoryQuery: Sendable {
    enum Sort: String, Sendable {
        case ascending = "ASCENDING"
        case descending = "DESCENDING"
    }

    static let productTypes: Set<String> = ["AUTO_RENEWABLE", "NON_RENEWABLE", "CONSUMABLE", "NON_CONSUMABLE"]

    var sort = Sort.ascending
    var revision: String?
    var startDate: Int64?
    var endDate: Int64?
    var productIds: Set<String> = []
    var productTypes: Set<String> = []
    var groups: Set<String> = []
    var ownership: String?
    var revoked: Bool?

    init(_ query: QueryItems) throws(AppleAPIError) {
        if let text = try query.single("sort", or: .invalidSort) {
            guard let sort = Sort(rawValue: text) else { throw .invalidSort }
            self.sort = sort
        }
        revision = try query.single("revision", or: .invalidRequestRevision)
        startDate = try query.single("startDate", or: .invalidStartDate).map { text throws(AppleAPIError) in
            guard let value = Int64(text), value >= 0 else { throw .invalidStartDate }
            return value
        }
        endDate = try query.single("endDate", or: .invalidEndDate).map { text throws(AppleAPIError) in
            guard let value = Int64(text), value >= 0 else { throw .invalidEndDate }
            return value
        }
        if let startDate, let endDate, startDate >= endDate { throw .startDateAfterEndDate }
        for id in query.values("productId") {
            guard !id.isEmpty, id.utf8.count <= 255 else { throw .invalidProductId }
            productIds.insert(id)
        }
        for type in query.values("productType") {
            guard Self.productTypes.contains(type) else { throw .invalidProductType }
            productTypes.insert(type)
        }
        for group in query.values("subscriptionGroupIdentifier") {
            guard !group.isEmpty, group.utf8.count <= 255 else { throw .invalidSubscriptionGroupIdentifier }
            groups.insert(group)
        }
        if let text = try query.single("inAppOwnershipType", or: .invalidInAppOwnershipType) {
            guard SimulatedTransaction.Ownership(rawValue: text) != nil else { throw .invalidInAppOwnershipType }
            ownership = text
        }
        if let text = try query.single("revoked", or: .invalidRevoked) {
            guard text == "true" || text == "false" else { throw .invalidRevoked }
            revoked = text == "true"
        }
    }

    func matches(_ transaction: SimulatedTransaction) -> Bool {
        let purchased = transaction.purchaseDate.milliseconds
        if let startDate, purchased < startDate { return false }
        if let endDate, purchased >= endDate { return false }
        if !productIds.isEmpty, !productIds.contains(transaction.productId) { return false }
        if !productTypes.isEmpty, !productTypes.contains("AUTO_RENEWABLE") { return false }
        if !groups.isEmpty, !groups.contains(transaction.subscriptionGroupIdentifier) { return false }
        if let ownership, ownership != transaction.inAppOwnershipType.rawValue { return false }
        if let revoked, revoked != (transaction.revocation != nil) { return false }
        return true
    }

    /// Identifies the filters and sort order: Apple requires a revision to come back with the query it was
    /// issued for.
    var fingerprint: String {
        let dates: [String] = [startDate.map { String($0) } ?? "", endDate.map { String($0) } ?? ""]
        let sets: [String] = [productIds, productTypes, groups].map { $0.sorted().joined(separator: ",") }
        let flags: [String] = [ownership ?? "", revoked.map { $0 ? "true" : "false" } ?? ""]
        return QueryFingerprint.of([sort.rawValue] + dates + sets + flags)
    }

    /// Where the page after `revision` starts: transactions modified after (ascending) or before
    /// (descending) this modification sequence number.
    func cursor() throws(AppleAPIError) -> Int64 {
        guard let revision else { return sort == .ascending ? 0 : .max }
        guard revision.utf8.count <= 256, let data = try? Base64URL.decode(revision) else { throw .invalidRequestRevision }
        let fields = String(decoding: data, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0] == "r1", fields[2] == fingerprint, let cursor = Int64(fields[1]), cursor >= 0 else {
            throw .invalidRequestRevision
        }
        return cursor
    }

    func revision(at cursor: Int64) -> String {
        Base64URL.encode(Data("r1:\(cursor):\(fingerprint)".utf8))
    }
}
