import Foundation
import GooglePlay
import Mirror
import Postgres
import Queue
import StoreModel

/// Re-fetches a purchase token's authoritative state from the Play Developer API: the subscription, the
/// chain of tokens it replaced (`linkedPurchaseToken`, walked back to a token the mirror knows or to the
/// first one), and the orders behind its line items and any voided charge — then translates it.
struct GoogleRefetch {
    /// Tokens walked back at most; real chains (upgrades, downgrades, re-signups) are short.
    static let maxChain = 20

    let client: GooglePlayAPIClient
    let pool: PostgresPool

    func snapshot(connection: StoreConnection, token: String, voided: [VoidedOrder], source: SnapshotSource,
                  attempt: Int) async throws -> GoogleSnapshotResult {
        do {
            let subscription = try await client.subscription(token: token)
            let (lineage, replaced) = try await chain(from: subscription, token: token, connectionID: connection.id)
            var orderIDs = Set(subscription.lineItems.compactMap(\.latestSuccessfulOrderId))
            orderIDs.formUnion(voided.map(\.orderID))
            var orders: [GooglePlayOrder] = []
            for id in orderIDs.sorted() { orders.append(try await client.order(id: id)) }
            return try GoogleSnapshotTranslator.snapshot(lineage: lineage, purchaseToken: token, subscription: subscription,
                                                         orders: orders, voided: voided, replacedTokens: replaced,
                                                         source: source, fetchedAt: Date())
        } catch let error as GooglePlayAPIError {
            throw StoreFailures.api(error)
        } catch let error as GoogleSnapshotError {
            throw JobFailure.permanent("Google Play's answer cannot be mirrored: \(error)")
        }
    }

    /// The lineage of `token` and the tokens it replaced, oldest first.
    private func chain(from subscription: SubscriptionPurchaseV2, token: String,
                       connectionID: Int64) async throws -> (lineage: String, replaced: [String]) {
        if let known = try await lineage(of: token, connectionID: connectionID) {
            return (known, subscription.linkedPurchaseToken.map { [$0] } ?? [])
        }
        var replaced: [String] = []
        var previous = subscription.linkedPurchaseToken
        while let linked = previous, replaced.count < Self.maxChain, !replaced.contains(linked), linked != token {
            replaced.insert(linked, at: 0)
            if let known = try await lineage(of: linked, connectionID: connectionID) { return (known, replaced) }
            do {
                previous = try await client.subscription(token: linked).linkedPurchaseToken
            } catch let error as GooglePlayAPIError where error.code == .gone || error.code == .notFound {
                // Google forgets tokens long expired: the oldest one it still names starts the lineage.
                break
            }
        }
        return (replaced.first ?? token, replaced)
    }

    private func lineage(of token: String, connectionID: Int64) async throws -> String? {
        try await pool.transaction { db in try PurchaseTokens.lineage(of: token, connectionID: connectionID, on: db) }
    }
}
