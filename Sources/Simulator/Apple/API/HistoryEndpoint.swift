import Foundation
import HTTP

/// Get Transaction History v2: the lineage's transactions in order of last modification, 20 per page. The
/// revision of a page is the modification point it ends at, so a transaction changed after it was handed
/// out (refunded, upgraded) comes again, updated, on a later page. A revision that does not parse, belongs to
/// other filters or (ascending) points past every change made so far is not one this store handed out, and
/// is answered as Apple does: 400 `4000005` InvalidRequestRevision.
extension SimulatorCore {
    static let historyPageSize = 20

    func history(_ request: HTTPRequest, app: SimulatedApp) throws -> HTTPResponse {
        let id = try transactionID(in: request, after: Self.historyPrefix)
        guard let items = QueryItems(request.query) else { throw AppleAPIError.generalBadRequest }
        let query = try HistoryQuery(items)
        let cursor = try query.cursor()
        let (page, hasMore, now) = try state.withLock { state in
            let subscription = try lineage(of: id, app: app, in: state)
            if query.revision != nil, query.sort == .ascending, cursor > state.lastSequence {
                throw AppleAPIError.invalidRequestRevision
            }
            let ordered = subscription.transactionIds
                .compactMap { id in state.transactions[id].map { ($0, state.modificationSequence[id] ?? 0) } }
                .filter { query.matches($0.0) }
                .sorted { query.sort == .ascending ? $0.1 < $1.1 : $0.1 > $1.1 }
            let remaining = ordered.filter { query.sort == .ascending ? $0.1 > cursor : $0.1 < cursor }
            return (Array(remaining.prefix(Self.historyPageSize)), remaining.count > Self.historyPageSize, state.now)
        }
        var body = envelope(app)
        body["revision"] = query.revision(at: page.last?.1 ?? cursor)
        body["hasMore"] = hasMore
        body["signedTransactions"] = try page.map { try signer.transaction($0.0, signedDate: now) }
        return .json(200, try JSONBody.string(body))
    }
}
