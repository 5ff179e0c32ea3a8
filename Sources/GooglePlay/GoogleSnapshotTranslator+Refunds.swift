import Foundation
import StoreModel

extension GoogleSnapshotTranslator {
    /// The refunds of `voided` orders of a lineage whose purchase token Google no longer answers for (410, or 404,
    /// about 60 days after the subscription expired) while `orders.get` still does: Google refunds and charges back
    /// such old orders, and without the subscription there is no state to mirror, only the refunds. Each refund
    /// follows the same amount rule as a snapshot's (`refund(of:…)`); an order that took no money refunds nothing.
    /// Pure, like `snapshot`.
    /// - Parameters:
    ///   - orders: the `orders.get` answers for the voided orders, one for each.
    ///   - knownTokens: every token the mirror recorded for `lineage`; an order of any other token is refused.
    ///   - fetchedAt: when the orders were fetched: the update's as-of time.
    public static func refunds(lineage: String, purchaseToken: String, orders: [GooglePlayOrder], voided: [VoidedOrder],
                               knownTokens: [String], source: SnapshotSource,
                               fetchedAt: Date) throws(GoogleSnapshotError) -> StoreRefundUpdate {
        let allowedTokens = Set([purchaseToken, lineage] + knownTokens)
        var refunds: [StoreRefundUpdate.Refund] = []
        for (id, record) in voidedByOrder(voided).sorted(by: { $0.key < $1.key }) {
            guard let order = orders.first(where: { $0.orderId == id }) else { throw missing("order \(id) of a voided record") }
            if let token = order.purchaseToken, !allowedTokens.contains(token) {
                throw GoogleSnapshotError(.orderMismatch, "voided order \(id) belongs to another purchase token than this "
                                          + "lineage's")
            }
            guard let total = try paidTotal(of: order, id: id),
                  let refund = try refund(of: order, id: id, total: total, voided: record) else { continue }
            refunds.append(StoreRefundUpdate.Refund(transactionID: id, refund: refund))
        }
        return StoreRefundUpdate(store: .google, lineage: lineage, refunds: refunds, asOf: fetchedAt, source: source)
    }
}
