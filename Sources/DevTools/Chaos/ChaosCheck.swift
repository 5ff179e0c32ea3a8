import Foundation
import Postgres
import Simulator

/// What a store's simulator says happened — the ground truth a chaos run's mirror is compared with.
struct ChaosTruth {
    struct Purchase {
        let lineage: String
        /// `store_purchases.store_state` the mirror must hold.
        let state: String
        /// Milliseconds since 1970.
        let expiresAt: Int64?
    }

    var purchases: [Purchase] = []
    /// Store transaction (Apple) or order (Google) id → amount in minor units.
    var charges: [String: Int64] = [:]
    /// Refunded transaction or order id → amount refunded in minor units.
    var refunds: [String: Int64] = [:]

    static func apple(_ simulator: AppStoreSimulator, lineages: [String]) -> ChaosTruth {
        var truth = ChaosTruth()
        for lineage in lineages {
            guard let subscription = simulator.subscription(lineage) else { continue }
            let state = switch subscription.status {
            case .active: "active"
            case .expired: "expired"
            case .billingRetry: "on_hold"
            case .gracePeriod: "grace"
            case .revoked: "revoked"
            }
            let latest = simulator.transaction(subscription.latestTransactionId)
            truth.purchases.append(Purchase(lineage: lineage, state: state,
                                            expiresAt: latest.map { Int64(($0.expiresDate.timeIntervalSince1970 * 1000).rounded()) }))
            for id in subscription.transactionIds {
                guard let transaction = simulator.transaction(id), transaction.inAppOwnershipType == .purchased,
                      transaction.offer == nil, transaction.price > 0 else { continue }
                // Milliunits of USD to cents; the load buys only whole cents.
                let amount = transaction.price / 10
                truth.charges[id] = amount
                if let revocation = transaction.revocation, revocation.kind != .familyRevoke {
                    truth.refunds[id] = revocation.percentage.map { amount * Int64($0) / 100_000 } ?? amount
                }
            }
        }
        return truth
    }

    /// Google's states as the mirror's translation reads them (`GoogleSnapshotTranslator`): a cancelled
    /// subscription is active until it expires.
    static func google(_ play: PlaySimulator, lineages: [String], now: Date) -> ChaosTruth {
        var truth = ChaosTruth()
        for lineage in lineages {
            guard let subscription = play.subscription(lineage) else { continue }
            let state = switch subscription.state {
            case .active: "active"
            case .inGracePeriod: "grace"
            case .onHold: "on_hold"
            case .paused: "paused"
            case .canceled: Double(subscription.expiryTime) / 1000 > now.timeIntervalSince1970 ? "active" : "expired"
            case .expired: "expired"
            case .pending, .pendingPurchaseCanceled: "pending"
            }
            truth.purchases.append(Purchase(lineage: lineage, state: state, expiresAt: subscription.expiryTime))
            for id in subscription.orderIds {
                guard let order = play.order(id) else { continue }
                truth.charges[id] = order.total
                if !order.refunds.isEmpty { truth.refunds[id] = order.refunds.reduce(0) { $0 + $1.total } }
            }
        }
        return truth
    }
}

/// The mirror of one connection compared with its store's truth.
struct ChaosComparison {
    var expectedCharges = 0
    var bookedCharges = 0
    var expectedRefunds = 0
    var bookedRefunds = 0
    var lostPurchases = 0
    var lostCharges = 0
    var lostRefunds = 0
    /// Rows booked more than once for one store transaction (the schema's unique keys forbid it; counted anyway).
    var duplicates = 0
    /// Purchases whose state or expiry differs from the store's.
    var stateMismatches = 0
    /// Charges or refunds booked with another amount than the store's, or a refund marked reversed.
    var amountMismatches = 0
    /// Charges or refunds booked that the store never made.
    var unexpected = 0
    /// The first few differences, for the log.
    var examples: [String] = []

    mutating func note(_ text: String) { if examples.count < 20 { examples.append(text) } }

    static func compare(_ truth: ChaosTruth, store: String, connectionID: Int64,
                        pool: PostgresPool) async throws -> ChaosComparison {
        var result = ChaosComparison()
        let purchases = try await pool.query("""
            SELECT lineage, store_state, (extract(epoch FROM expires_at) * 1000)::bigint FROM store_purchases
            WHERE connection_id = $1
            """, [connectionID])
        var mirrored: [String: (String, Int64?)] = [:]
        for row in purchases {
            mirrored[try row.decode(0)] = (try row.decode(1), try row.decodeOptional(2))
        }
        for purchase in truth.purchases {
            guard let (state, expiresAt) = mirrored[purchase.lineage] else {
                result.lostPurchases += 1
                result.note("\(store) purchase \(purchase.lineage) is not mirrored")
                continue
            }
            if state != purchase.state || expiresAt != purchase.expiresAt {
                result.stateMismatches += 1
                result.note("\(store) purchase \(purchase.lineage): mirror \(state) until \(expiresAt.map(String.init) ?? "-"), "
                            + "store \(purchase.state) until \(purchase.expiresAt.map(String.init) ?? "-")")
            }
        }
        let charges = try await pool.query("""
            SELECT i.store_transaction_id, i.amount_minor, count(pm.id)::bigint FROM invoices i
            JOIN store_purchases p ON p.id = i.purchase_id LEFT JOIN payments pm ON pm.invoice_id = i.id
            WHERE p.connection_id = $1 GROUP BY i.id
            """, [connectionID])
        var booked: [String: Int64] = [:]
        for row in charges {
            let id: String = try row.decode(0)
            let amount: Int64 = try row.decode(1)
            let payments: Int64 = try row.decode(2)
            if booked[id] != nil || payments > 1 { result.duplicates += 1; result.note("\(store) charge \(id) booked twice") }
            if payments == 0 { result.lostCharges += 1; result.note("\(store) charge \(id) has an invoice but no payment") }
            booked[id] = amount
        }
        result.bookedCharges = booked.count
        result.expectedCharges = truth.charges.count
        for (id, amount) in truth.charges {
            guard let bookedAmount = booked[id] else {
                result.lostCharges += 1
                result.note("\(store) charge \(id) is not booked")
                continue
            }
            if bookedAmount != amount {
                result.amountMismatches += 1
                result.note("\(store) charge \(id): booked \(bookedAmount), store \(amount)")
            }
        }
        for id in booked.keys where truth.charges[id] == nil {
            result.unexpected += 1
            result.note("\(store) charge \(id) is booked but the store never made it")
        }
        let refunds = try await pool.query("""
            SELECT r.refunded_transaction_id, r.amount_minor, r.reversed_at IS NOT NULL FROM refunds r
            JOIN invoices i ON i.id = r.invoice_id JOIN store_purchases p ON p.id = i.purchase_id
            WHERE p.connection_id = $1
            """, [connectionID])
        var refunded: [String: (Int64, Bool)] = [:]
        for row in refunds {
            let id: String = try row.decode(0)
            if refunded[id] != nil { result.duplicates += 1; result.note("\(store) refund of \(id) booked twice") }
            refunded[id] = (try row.decode(1), try row.decode(2))
        }
        result.bookedRefunds = refunded.count
        result.expectedRefunds = truth.refunds.count
        for (id, amount) in truth.refunds {
            guard let (bookedAmount, reversed) = refunded[id] else {
                result.lostRefunds += 1
                result.note("\(store) refund of \(id) is not booked")
                continue
            }
            if bookedAmount != amount || reversed {
                result.amountMismatches += 1
                result.note("\(store) refund of \(id): booked \(bookedAmount)\(reversed ? " reversed" : ""), store \(amount)")
            }
        }
        for id in refunded.keys where truth.refunds[id] == nil {
            result.unexpected += 1
            result.note("\(store) refund of \(id) is booked but the store never refunded it")
        }
        let doubled: Int = try await pool.query("""
            SELECT count(*)::int FROM (SELECT purchase_id FROM customer_subscriptions
                                       WHERE purchase_id IN (SELECT id FROM store_purchases WHERE connection_id = $1)
                                       GROUP BY purchase_id HAVING count(*) > 1) d
            """, [connectionID])[0].decode(0)
        result.duplicates += doubled
        return result
    }

    mutating func merge(_ other: ChaosComparison) {
        expectedCharges += other.expectedCharges
        bookedCharges += other.bookedCharges
        expectedRefunds += other.expectedRefunds
        bookedRefunds += other.bookedRefunds
        lostPurchases += other.lostPurchases
        lostCharges += other.lostCharges
        lostRefunds += other.lostRefunds
        duplicates += other.duplicates
        stateMismatches += other.stateMismatches
        amountMismatches += other.amountMismatches
        unexpected += other.unexpected
        for example in other.examples { note(example) }
    }

    var lost: Int { lostPurchases + lostCharges + lostRefunds }
}
