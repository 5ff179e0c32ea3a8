import Accounts
import Foundation
import GooglePlay
import Logging
import Mirror
import Postgres
import Queue
import StoreModel

/// Re-fetches a purchase token's authoritative state from the Play Developer API: the subscription, the
/// chain of tokens it replaced (`linkedPurchaseToken`, walked back to a token the mirror knows or to the
/// first one), and the orders behind its line items and any voided charge — then translates it. A token Google
/// no longer answers for still has its voided orders refunded (`refundsOnly`).
struct GoogleRefetch {
    /// What re-fetching a purchase token came to.
    enum Answer {
        case snapshot(StoreSnapshot)
        /// A pending purchase (`GoogleSnapshotResult.pending`): nothing to mirror yet.
        case pending
        /// Google no longer answers for the token, but its voided orders are of a lineage `connection` mirrors:
        /// only their refunds are booked, the mirror's state stays.
        case refunds(StoreRefundUpdate, connection: StoreConnection)
        /// Google answered 410 (`gone`) or 404 (`notFound`) for the token and the job carries no voided order to
        /// refund: whether that is final is the caller's to say.
        case unanswered(GooglePlayAPIError)
    }

    /// Tokens walked back at most; real chains (upgrades, downgrades, re-signups) are short.
    static let maxChain = 20

    let tools: GoogleStoreClients.Tools
    let pool: PostgresPool
    /// The job's last error (`LeasedJob.lastError`), which bounds how often a failing TLS handshake is retried.
    let previousError: String?
    let logger: Logger

    var client: GooglePlayAPIClient { tools.client }

    /// - Parameters:
    ///   - mirrors: the connections that may mirror the token's lineage, the one to prefer first; searched only when
    ///     Google no longer answers for the token.
    ///   - known: what the mirror knew of `token` on `connection` when the job began (`PurchaseTokens.known`), if it
    ///     was read: its lineage and recent charges are then not asked for again.
    func refetch(connection: StoreConnection, token: String, voided: [VoidedOrder], source: SnapshotSource,
                 mirrors: [StoreConnection], known: PurchaseTokens.Known? = nil) async throws -> Answer {
        do {
            return try await fetch(connection: connection, token: token, voided: voided, source: source, mirrors: mirrors,
                                   known: known)
        } catch let error as GooglePlayAPIError {
            throw tools.failure(error, previous: previousError, logger: logger)
        } catch let error as GoogleSnapshotError {
            throw JobFailure.permanent("Google Play's answer cannot be mirrored: \(error)")
        }
    }

    /// The same read, failing with Google's own `GooglePlayAPIError` or `GoogleSnapshotError`: for a caller
    /// that answers a person now (the API's purchase registration) rather than retrying a job.
    func fetch(connection: StoreConnection, token: String, voided: [VoidedOrder], source: SnapshotSource,
               mirrors: [StoreConnection], known: PurchaseTokens.Known? = nil) async throws -> Answer {
        let mirrored = known?.connectionID == connection.id ? known : nil
        let subscription: SubscriptionPurchaseV2
        do {
            subscription = try await client.subscription(token: token)
        } catch let error as GooglePlayAPIError where error.code == .gone || error.code == .notFound {
            return try await refundsOnly(token: token, voided: voided, source: source, mirrors: mirrors, because: error)
        }
        let (lineage, replaced) = if let mirrored {
            (mirrored.lineage, subscription.linkedPurchaseToken.map { [$0] } ?? [])
        } else {
            try await chain(from: subscription, token: token, connectionID: connection.id)
        }
        // A voided order may be any token's of a long chain; the other orders are this token's.
        let known = voided.isEmpty ? [] : try await pool.run { db in
            try PurchaseTokens.tokens(ofLineage: lineage, connectionID: connection.id, on: db)
        }
        let latest = Set(subscription.lineItems.compactMap(\.latestSuccessfulOrderId))
        var orderIDs = latest.union(voided.map(\.orderID))
        orderIDs.formUnion(try await unbookedEarlierOrders(latest, booked: mirrored?.bookedCharges))
        let orders = try await self.orders(orderIDs.sorted(), mayBeMissing: orderIDs.subtracting(latest))
        switch try GoogleSnapshotTranslator.snapshot(lineage: lineage, purchaseToken: token, subscription: subscription,
                                                     orders: orders, voided: voided, replacedTokens: replaced,
                                                     knownTokens: known, source: source, fetchedAt: Date()) {
        case .snapshot(let snapshot): return .snapshot(snapshot)
        case .pending: return .pending
        }
    }

    /// The orders `ids`, read through the app's batcher with what other jobs read at the same time. Those a line
    /// item or a voided purchase names exist, and an unknown one fails the fetch with Google's answer; the rest
    /// (`mayBeMissing`) are guessed renewal numbers Google may never have charged (a recovered or paused period),
    /// skipped when unknown.
    private func orders(_ ids: [String], mayBeMissing: Set<String>) async throws -> [GooglePlayOrder] {
        var orders: [GooglePlayOrder] = []
        for batch in GooglePlayAPIClient.batches(of: ids) {
            let reads = try await tools.orders.orders(batch)
            for id in batch {
                switch reads[id] {
                case .found(let order): orders.append(order)
                case .unknown where mayBeMissing.contains(id): continue
                case .unknown(let error): throw error
                case nil: throw GooglePlayAPIError(.invalidResponse, "the order read answered nothing for \(id)")
                }
            }
        }
        return orders
    }

    /// Most renewal orders looked back for at once; older gaps are filled by later fetches.
    static let maxEarlierOrders = 100

    /// The orders before the latest that were never booked — their notifications lost, or overtaken by a later
    /// renewal before the worker fetched. Google numbers a subscription's orders `GPA.…` (the purchase),
    /// then `GPA.…..0`, `..1`, … for each renewal, so the earlier ones follow from the latest one's id. `booked`, when
    /// known, holds the lineage's latest booked charges (`PurchaseTokens.Known`); otherwise the invoices are asked.
    /// One booked but missing from it is only read again, and booked once all the same.
    private func unbookedEarlierOrders(_ latest: Set<String>, booked known: Set<String>?) async throws -> [String] {
        var candidates: [String] = []
        for id in latest {
            guard let range = id.range(of: "..", options: .backwards), let number = Int(id[range.upperBound...]),
                  number >= 0 else { continue }
            let base = String(id[..<range.lowerBound])
            candidates.append(base)
            candidates += (max(0, number - Self.maxEarlierOrders)..<number).map { "\(base)..\($0)" }
        }
        guard !candidates.isEmpty else { return [] }
        let booked = if let known { known } else { try await pool.query(Invoices.booked(store: .google, among: candidates)) }
        return candidates.filter { !booked.contains($0) }
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
        try await pool.run { db in try PurchaseTokens.lineage(of: token, connectionID: connectionID, on: db) }
    }
}
