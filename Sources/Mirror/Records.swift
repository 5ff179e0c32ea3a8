import Foundation
import Postgres
import StoreModel

/// The purchase and customer-subscription rows a snapshot updates.
enum Records {
    /// Writes the lineage's purchase row as planned and returns its id. A stale snapshot changes nothing but
    /// a first link; a link, once made, is never changed. The snapshot's cursor is kept with the row so the
    /// store's next read resumes from it; a snapshot without one keeps the stored cursor.
    static func upsertPurchase(_ snapshot: StoreSnapshot, _ write: MirrorPlan.PurchaseWrite, connectionID: Int64,
                               customerID: String?, on db: isolated PostgresConnection) throws -> Int64 {
        switch write {
        case .insert:
            return try db.query("""
                INSERT INTO store_purchases (connection_id, lineage, environment, customer_id, linked_at, account_token,
                    ownership, store_product_id, base_plan_id, store_state, expires_at, snapshot, as_of, history_revision,
                    needs_acknowledgement, period_start, grace_ends_at, auto_renew, in_free_trial)
                VALUES ($1, $2, $3, $4::uuid, CASE WHEN $4 IS NULL THEN NULL ELSE now() END, $5, $6, $7, $8, $9, $10,
                        $11::jsonb, $12, $13, $14, $15, $16, $17, $18)
                RETURNING id
                """, [connectionID, snapshot.lineage, snapshot.environment.rawValue, customerID, snapshot.accountToken,
                      snapshot.ownership.rawValue, snapshot.productID, snapshot.basePlanID, snapshot.state.rawValue,
                      snapshot.expiresAt, snapshot.raw, snapshot.asOf, snapshot.cursor, snapshot.needsAcknowledgement,
                      snapshot.periodStart, snapshot.graceEndsAt, snapshot.autoRenew, snapshot.inFreeTrial])[0]
                .decode(0)
        // Nothing below needs an answer from these updates: they travel with the next statement.
        case .overwrite(let purchaseID):
            try db.queryLater("""
                UPDATE store_purchases SET customer_id = COALESCE(customer_id, $2::uuid),
                    linked_at = COALESCE(linked_at, CASE WHEN $2 IS NULL THEN NULL ELSE now() END),
                    account_token = COALESCE($3, account_token), ownership = $4, store_product_id = $5, base_plan_id = $6,
                    store_state = $7, expires_at = $8, snapshot = $9::jsonb, as_of = $10,
                    history_revision = COALESCE($11, history_revision), needs_acknowledgement = $12,
                    period_start = $13, grace_ends_at = $14, auto_renew = $15, in_free_trial = $16, updated_at = now()
                WHERE id = $1
                """, [purchaseID, customerID, snapshot.accountToken, snapshot.ownership.rawValue, snapshot.productID,
                      snapshot.basePlanID, snapshot.state.rawValue, snapshot.expiresAt, snapshot.raw, snapshot.asOf,
                      snapshot.cursor, snapshot.needsAcknowledgement, snapshot.periodStart, snapshot.graceEndsAt,
                      snapshot.autoRenew, snapshot.inFreeTrial])
            return purchaseID
        case .link(let purchaseID):
            try db.queryLater("""
                UPDATE store_purchases SET customer_id = $2::uuid, linked_at = now(), updated_at = now()
                WHERE id = $1 AND customer_id IS NULL
                """, [purchaseID, customerID])
            return purchaseID
        case .keep(let purchaseID):
            return purchaseID
        }
    }

    /// The store's view of a purchase that its customer subscription mirrors.
    struct MirroredState: Equatable {
        let store: Store
        let planPriceID: Int64
        let state: StoreState
        let autoRenew: Bool
        let inFreeTrial: Bool
        let periodStart: Date?
        let expiresAt: Date?
        let graceEndsAt: Date?

        init(_ snapshot: StoreSnapshot, planPriceID: Int64) {
            store = snapshot.store
            self.planPriceID = planPriceID
            state = snapshot.state
            autoRenew = snapshot.autoRenew
            inFreeTrial = snapshot.inFreeTrial
            periodStart = snapshot.periodStart
            expiresAt = snapshot.expiresAt
            graceEndsAt = snapshot.graceEndsAt
        }

        /// What the purchase row holds (the newest state seen), for creating a subscription when a stale
        /// snapshot is the one that links the purchase: the subscription must start from the newest state.
        init?(storedFor purchaseID: Int64, store: Store, on db: isolated PostgresConnection) throws {
            guard let row = try db.query("""
                SELECT m.plan_price_id, p.store_state, p.auto_renew, p.in_free_trial, p.period_start, p.expires_at,
                       p.grace_ends_at
                FROM store_purchases p
                JOIN product_mappings m ON m.connection_id = p.connection_id AND m.store_product_id = p.store_product_id
                                       AND m.base_plan_id = COALESCE(p.base_plan_id, '')
                WHERE p.id = $1
                """, [purchaseID]).first,
                let state = StoreState(rawValue: try row.decode(1))
            else { return nil }
            self.store = store
            planPriceID = try row.decode(0)
            self.state = state
            autoRenew = try row.decode(2)
            inFreeTrial = try row.decode(3)
            periodStart = try row.decodeOptional(4)
            expiresAt = try row.decodeOptional(5)
            graceEndsAt = try row.decodeOptional(6)
        }
    }

    /// Creates or updates the customer subscription that mirrors the purchase. With `overwrite` false (a
    /// stale snapshot) it only creates a missing one; it never overwrites newer state. Deferred: the rows that
    /// name the subscription (invoices) look it up by purchase in the statements that follow.
    static func upsertSubscription(_ mirrored: MirroredState, accountID: Int64, customerID: String, purchaseID: Int64,
                                   overwrite: Bool, on db: isolated PostgresConnection) throws {
        let status = SubscriptionStatus.following(state: mirrored.state, autoRenew: mirrored.autoRenew,
                                                  inFreeTrial: mirrored.inFreeTrial)
        let cancelledAt = status == .cancelled ? mirrored.expiresAt : nil
        let onConflict = overwrite ? """
            DO UPDATE SET plan_price_id = EXCLUDED.plan_price_id, store_state = EXCLUDED.store_state,
                status = EXCLUDED.status, current_period_start = EXCLUDED.current_period_start,
                current_period_end = EXCLUDED.current_period_end, expires_at = EXCLUDED.expires_at,
                grace_ends_at = EXCLUDED.grace_ends_at, auto_renew = EXCLUDED.auto_renew,
                cancelled_at = EXCLUDED.cancelled_at, updated_at = now()
            """ : "DO UPDATE SET updated_at = customer_subscriptions.updated_at"
        try db.queryLater("""
            INSERT INTO customer_subscriptions (account_id, customer_id, plan_price_id, source, purchase_id, store_state,
                status, current_period_start, current_period_end, expires_at, grace_ends_at, auto_renew, cancelled_at)
            VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12)
            ON CONFLICT (purchase_id) \(onConflict)
            """, [accountID, customerID, mirrored.planPriceID, mirrored.store.rawValue, purchaseID, mirrored.state.rawValue,
                  status.rawValue, mirrored.periodStart, mirrored.expiresAt, mirrored.graceEndsAt, mirrored.autoRenew,
                  cancelledAt])
    }

    /// Charges booked while the purchase was unlinked belong to the customer it links to, and to its
    /// subscription.
    static func claimInvoices(purchaseID: Int64, customerID: String?, on db: isolated PostgresConnection) throws {
        try db.queryLater("""
            UPDATE invoices SET customer_id = $2::uuid, subscription_id = (\(subscriptionOfPurchase))
            WHERE purchase_id = $1 AND customer_id IS NULL
            """, [purchaseID, customerID])
    }

    /// The subscription mirroring purchase `$1`, if the purchase is linked: read where it is needed, after the
    /// deferred upsert that creates it, rather than returned to the worker and sent back.
    static let subscriptionOfPurchase = "SELECT id FROM customer_subscriptions WHERE purchase_id = $1"
}
