import Foundation
import Postgres
import StoreModel

/// The purchase and customer-subscription rows a snapshot updates.
enum Records {
    /// Inserts or updates the lineage's purchase row and returns its id. A stale snapshot changes nothing but
    /// a first link; a link, once made, is never changed.
    static func upsertPurchase(_ snapshot: StoreSnapshot, connection: StoreConnection, existingID: Int64?,
                               customerID: String?, fresh: Bool, historyRevision: String?,
                               on db: isolated PostgresConnection) throws -> Int64 {
        guard let existingID else {
            return try db.query("""
                INSERT INTO store_purchases (connection_id, lineage, environment, customer_id, linked_at, account_token,
                    ownership, store_product_id, base_plan_id, store_state, expires_at, snapshot, as_of, history_revision,
                    needs_acknowledgement)
                VALUES ($1, $2, $3, $4::uuid, CASE WHEN $4 IS NULL THEN NULL ELSE now() END, $5, $6, $7, $8, $9, $10,
                        $11::jsonb, $12, $13, $14)
                RETURNING id
                """, [connection.id, snapshot.lineage, snapshot.environment.rawValue, customerID, snapshot.accountToken,
                      snapshot.ownership.rawValue, snapshot.productID, snapshot.basePlanID, snapshot.state.rawValue,
                      snapshot.expiresAt, snapshot.raw, snapshot.asOf, historyRevision, snapshot.needsAcknowledgement])[0]
                .decode(0)
        }
        if fresh {
            _ = try db.query("""
                UPDATE store_purchases SET customer_id = COALESCE(customer_id, $2::uuid),
                    linked_at = COALESCE(linked_at, CASE WHEN $2 IS NULL THEN NULL ELSE now() END),
                    account_token = COALESCE($3, account_token), ownership = $4, store_product_id = $5, base_plan_id = $6,
                    store_state = $7, expires_at = $8, snapshot = $9::jsonb, as_of = $10,
                    history_revision = COALESCE($11, history_revision), needs_acknowledgement = $12, updated_at = now()
                WHERE id = $1
                """, [existingID, customerID, snapshot.accountToken, snapshot.ownership.rawValue, snapshot.productID,
                      snapshot.basePlanID, snapshot.state.rawValue, snapshot.expiresAt, snapshot.raw, snapshot.asOf,
                      historyRevision, snapshot.needsAcknowledgement])
        } else if customerID != nil {
            _ = try db.query("""
                UPDATE store_purchases SET customer_id = $2::uuid, linked_at = now(), updated_at = now()
                WHERE id = $1 AND customer_id IS NULL
                """, [existingID, customerID])
        }
        return existingID
    }

    /// Creates or updates the customer subscription that mirrors the purchase. A stale snapshot only creates
    /// a missing one; it never overwrites newer state.
    static func upsertSubscription(_ snapshot: StoreSnapshot, accountID: Int64, customerID: String, planPriceID: Int64,
                                   purchaseID: Int64, fresh: Bool, on db: isolated PostgresConnection) throws -> Int64 {
        let status = SubscriptionStatus.following(state: snapshot.state, autoRenew: snapshot.autoRenew,
                                                  inFreeTrial: snapshot.inFreeTrial)
        let cancelledAt = status == .cancelled ? snapshot.expiresAt : nil
        let onConflict = fresh ? """
            DO UPDATE SET plan_price_id = EXCLUDED.plan_price_id, store_state = EXCLUDED.store_state,
                status = EXCLUDED.status, current_period_start = EXCLUDED.current_period_start,
                current_period_end = EXCLUDED.current_period_end, expires_at = EXCLUDED.expires_at,
                grace_ends_at = EXCLUDED.grace_ends_at, auto_renew = EXCLUDED.auto_renew,
                cancelled_at = EXCLUDED.cancelled_at, updated_at = now()
            """ : "DO UPDATE SET updated_at = customer_subscriptions.updated_at"
        return try db.query("""
            INSERT INTO customer_subscriptions (account_id, customer_id, plan_price_id, source, purchase_id, store_state,
                status, current_period_start, current_period_end, expires_at, grace_ends_at, auto_renew, cancelled_at)
            VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12)
            ON CONFLICT (purchase_id) \(onConflict)
            RETURNING id
            """, [accountID, customerID, planPriceID, snapshot.store.rawValue, purchaseID, snapshot.state.rawValue,
                  status.rawValue, snapshot.periodStart, snapshot.expiresAt, snapshot.graceEndsAt, snapshot.autoRenew,
                  cancelledAt])[0].decode(0)
    }

    /// Charges booked while the purchase was unlinked belong to the customer it links to.
    static func claimInvoices(purchaseID: Int64, customerID: String?, subscriptionID: Int64?,
                              on db: isolated PostgresConnection) throws {
        _ = try db.query("""
            UPDATE invoices SET customer_id = $2::uuid, subscription_id = $3 WHERE purchase_id = $1 AND customer_id IS NULL
            """, [purchaseID, customerID, subscriptionID])
    }
}
