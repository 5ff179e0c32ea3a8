import Accounts
import Foundation
import GooglePlay
import Mirror
import Queue
import StoreModel

extension GoogleRefetch {
    /// Google answered `error` (`gone` about 60 days after the subscription expired, or `notFound`) for `token`,
    /// yet it still refunds and charges back such old orders, and `orders.get` still answers for them. So voided
    /// orders of a lineage the mirror knows are refunded from their orders alone, without touching the
    /// subscription's state; a refund the books miss would overstate the money. Without voided orders the answer is
    /// `unanswered`; for a token no mirror knows, the job fails permanently with Google's answer; a voided order
    /// `orders.get` does not know fails it permanently too, naming the order.
    func refundsOnly(token: String, voided: [VoidedOrder], source: SnapshotSource, mirrors: [StoreConnection],
                     because error: GooglePlayAPIError) async throws -> Answer {
        guard !voided.isEmpty else { return .unanswered(error) }
        let orderIDs = Set(voided.map(\.orderID)).sorted()
        let found = try await pool.run { db -> (lineage: String, connection: StoreConnection, tokens: [String])? in
            for mirror in mirrors {
                if let lineage = try PurchaseTokens.lineage(of: token, connectionID: mirror.id, on: db) {
                    return (lineage, mirror, try PurchaseTokens.tokens(ofLineage: lineage, connectionID: mirror.id, on: db))
                }
            }
            return nil
        }
        guard let found else {
            throw JobFailure.permanent("\(error); the mirror knows no lineage of the token, so the refund of voided order(s) "
                                       + "\(orderIDs.joined(separator: ", ")) cannot be booked")
        }
        var orders: [GooglePlayOrder] = []
        for id in orderIDs {
            do {
                orders.append(try await client.order(id: id))
            } catch let orderError as GooglePlayAPIError where orderError.code == .notFound {
                throw JobFailure.permanent("voided order \(id) cannot be refunded: Google no longer answers for its purchase "
                                           + "token (\(error.code)) and orders.get does not know the order: \(orderError)")
            }
        }
        let update = try GoogleSnapshotTranslator.refunds(lineage: found.lineage, purchaseToken: token, orders: orders,
                                                          voided: voided, knownTokens: found.tokens, source: source,
                                                          fetchedAt: Date())
        return .refunds(update, connection: found.connection)
    }
}
