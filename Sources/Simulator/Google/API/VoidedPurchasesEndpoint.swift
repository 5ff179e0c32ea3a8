import Crypto
import Foundation

/// `purchases.voidedpurchases.list` (google.md §3.4): voided orders of the package whose voided time lies in
/// `[startTime, endTime]` (milliseconds; default the last 30 days, which is also the limit), oldest first,
/// `maxResults` per page (default and maximum 1000) with `tokenPagination.nextPageToken`. `type` 0 (the
/// default) lists one-time products only — so no subscription; `type=1` includes subscriptions. Quantity-based
/// partial refunds appear only with `includeQuantityBasedPartialRefund=true`.
extension PlayCore {
    static let voidedRetention: Int64 = 30 * 86_400_000

    private struct VoidedQuery {
        let start: Int64
        let end: Int64
        let type: Int
        let includePartial: Bool
        let pageSize: Int
        let offset: Int

        /// Binds a page token to the filters it was issued for.
        var fingerprint: String {
            QueryFingerprint.of([String(type), String(includePartial), String(pageSize), String(start), String(end)])
        }
    }

    func voidedPurchases(_ packageName: String, _ query: String?) throws -> [String: Any] {
        let (records, now) = state.withLock { state in (state.voided, state.now) }
        let request = try Self.voidedQuery(query, now: now)
        let matching = records.filter { record in
            record.packageName == packageName && record.voidedTime >= request.start && record.voidedTime <= request.end
                && request.type == 1 && (request.includePartial || record.refundType == 1)
        }.sorted { $0.voidedTime < $1.voidedTime }
        let page = matching.dropFirst(request.offset).prefix(request.pageSize)
        var body: [String: Any] = [
            "pageInfo": ["totalResults": matching.count, "resultPerPage": request.pageSize, "startIndex": request.offset],
        ]
        if !page.isEmpty { body["voidedPurchases"] = page.map(\.resource) }
        let next = request.offset + page.count
        if next < matching.count {
            let token = "v1:\(next):\(request.start):\(request.end):\(request.fingerprint)"
            body["tokenPagination"] = ["nextPageToken": Base64URL.encode(Data(token.utf8))]
        }
        return body
    }

    private static func voidedQuery(_ query: String?, now: Int64) throws -> VoidedQuery {
        guard let items = QueryItems(query) else { throw PlayAPIError.invalid("Invalid query.", parameter: "query") }
        func single(_ name: String) throws -> String? {
            let values = items.values(name)
            guard values.count <= 1 else { throw PlayAPIError.invalid("\(name) may be given once.", parameter: name) }
            return values.first
        }
        func integer(_ name: String, _ range: ClosedRange<Int64>) throws -> Int64? {
            guard let text = try single(name) else { return nil }
            guard text.utf8.count <= 19, let value = Int64(text), range.contains(value) else {
                throw PlayAPIError.invalid("Invalid value for \(name): \(text.prefix(24))", parameter: name)
            }
            return value
        }
        let type = Int(try integer("type", 0...1) ?? 0)
        let pageSize = Int(try integer("maxResults", 1...1000) ?? 1000)
        var includePartial = false
        if let text = try single("includeQuantityBasedPartialRefund") {
            guard text == "true" || text == "false" else {
                throw PlayAPIError.invalid("Invalid value for includeQuantityBasedPartialRefund.", parameter: "includeQuantityBasedPartialRefund")
            }
            includePartial = text == "true"
        }
        if let token = try single("token") {
            // With a token the time window is the one the token was issued for.
            guard token.utf8.count <= 512, let data = try? Base64URL.decode(token) else {
                throw PlayAPIError.invalid("Invalid pagination token.", parameter: "token")
            }
            let fields = String(decoding: data, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 5, fields[0] == "v1", let offset = Int(fields[1]), offset >= 0,
                  let start = Int64(fields[2]), let end = Int64(fields[3]) else {
                throw PlayAPIError.invalid("Invalid pagination token.", parameter: "token")
            }
            let query = VoidedQuery(start: start, end: end, type: type, includePartial: includePartial, pageSize: pageSize,
                                    offset: offset)
            guard String(fields[4]) == query.fingerprint else {
                throw PlayAPIError.invalid("The pagination token does not belong to this query.", parameter: "token")
            }
            return query
        }
        let end = try integer("endTime", 0...Int64.max) ?? now
        let start = try integer("startTime", 0...Int64.max) ?? now - voidedRetention
        guard end <= now else { throw PlayAPIError.invalid("endTime cannot be in the future.", parameter: "endTime") }
        guard start >= now - voidedRetention else {
            throw PlayAPIError.invalid("startTime cannot be older than 30 days.", parameter: "startTime")
        }
        guard start <= end else { throw PlayAPIError.invalid("startTime must not be after endTime.", parameter: "startTime") }
        return VoidedQuery(start: start, end: end, type: type, includePartial: includePartial, pageSize: pageSize, offset: 0)
    }
}
