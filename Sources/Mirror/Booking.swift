import Foundation
import Postgres
import StoreModel

/// Books store charges and refunds exactly once: the unique (store, transaction) keys on invoices, payments
/// and refunds make a charge seen again — a duplicate notification, a resync, an overlapping history page —
/// a no-op. Each kind of row is written for all charges in one statement.
enum Booking {
    struct Result {
        var charges: [String] = []
        var refunds: [String] = []
        var reversals: [String] = []
    }

    /// Writes `plan`'s bookings; the database tells which charges, refunds and reversals were new.
    static func book(_ plan: MirrorPlan.Bookings, store: Store, purchaseID: Int64, customerID: String?, asOf: Date,
                     on db: isolated PostgresConnection) throws -> Result {
        var result = Result()
        let charges = plan.charges
        guard !charges.isEmpty else { return result }
        result.charges = try db.query("""
            WITH c AS (
                SELECT * FROM unnest($4::text[], $5::text[], $6::bigint[], $7::text[], $8::timestamptz[],
                                     $9::timestamptz[], $10::timestamptz[], $11::text[])
                    AS c(transaction_id, product_id, amount, currency, charged_at, period_start, period_end, reason)
            ), invoice AS (
                INSERT INTO invoices (purchase_id, customer_id, subscription_id, store, store_transaction_id,
                                      store_product_id, amount_minor, currency, description, period_start, period_end,
                                      issued_at)
                SELECT $1, $2::uuid, (\(Records.subscriptionOfPurchase)), $3, transaction_id, product_id, amount, currency,
                       reason || ' ' || product_id, period_start, period_end, charged_at
                FROM c
                ON CONFLICT (store, store_transaction_id) DO NOTHING
                RETURNING id, store_transaction_id, amount_minor, currency, issued_at
            )
            INSERT INTO payments (invoice_id, store, store_transaction_id, amount_minor, currency, paid_at)
            SELECT id, $3, store_transaction_id, amount_minor, currency, issued_at FROM invoice
            RETURNING store_transaction_id
            """, [purchaseID, customerID, store.rawValue,
                  PostgresArray(charges.map(\.transactionID)), PostgresArray(charges.map(\.productID)),
                  PostgresArray(charges.map(\.amount.minorUnits)), PostgresArray(charges.map(\.amount.currency)),
                  PostgresArray(charges.map(\.chargedAt)), PostgresArray(charges.map(\.periodStart)),
                  PostgresArray(charges.map(\.periodEnd)), PostgresArray(charges.map(\.reason))])
            .map { try $0.decode(0) }

        result.refunds = try book(refunds: plan.refunds, store: store, asOf: asOf, on: db)

        if !plan.reversals.isEmpty {
            // The store shows the charge without its refund any more, in a copy signed at or after the refund: it
            // was reversed. Its row stays.
            result.reversals = try db.query("""
                UPDATE refunds f SET reversed_at = $3
                FROM unnest($2::text[], $4::timestamptz[]) AS c(transaction_id, seen_at)
                WHERE f.store = $1 AND f.refunded_transaction_id = c.transaction_id AND f.reversed_at IS NULL
                  AND (c.seen_at IS NULL OR c.seen_at >= f.refunded_at)
                RETURNING f.refunded_transaction_id
                """, [store.rawValue, PostgresArray(plan.reversals.map(\.transactionID)), asOf,
                      PostgresArray(plan.reversals.map(\.seenAt))])
                .map { try $0.decode(0) }
        }
        return result
    }

    /// Books `refunds` against the invoices and payments of their charges; returns the transaction ids whose refund
    /// was inserted or changed. A refund whose charge has no invoice is not written: `book(_:…)` inserts the invoices
    /// just before, and a refund-only update checks first that they exist. A refund the store shows again after its
    /// reversal is live again — but only in an answer newer than the reversal (`asOf`): a late copy of the original
    /// refund notification must not undo it. A live refund takes a larger amount (the rest of a charge refunded in
    /// parts; the kind follows, partial → full) and is never lowered: refunds only grow, so a smaller amount is an
    /// older answer's.
    static func book(refunds: [StoreRefundUpdate.Refund], store: Store, asOf: Date,
                     on db: isolated PostgresConnection) throws -> [String] {
        guard !refunds.isEmpty else { return [] }
        return try db.query("""
            INSERT INTO refunds (invoice_id, payment_id, store, refunded_transaction_id, amount_minor, currency, kind,
                                 reason, refunded_at)
            SELECT i.id, p.id, $1, r.transaction_id, r.amount, r.currency, r.kind, r.reason, r.refunded_at
            FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
                AS r(transaction_id, amount, currency, kind, reason, refunded_at)
            JOIN invoices i ON i.store = $1 AND i.store_transaction_id = r.transaction_id
            JOIN payments p ON p.invoice_id = i.id
            ON CONFLICT (store, refunded_transaction_id) DO UPDATE SET reversed_at = NULL,
                amount_minor = EXCLUDED.amount_minor, kind = EXCLUDED.kind, refunded_at = EXCLUDED.refunded_at,
                reason = COALESCE(EXCLUDED.reason, refunds.reason)
                WHERE refunds.reversed_at < $8
                   OR (refunds.reversed_at IS NULL AND EXCLUDED.amount_minor > refunds.amount_minor)
            RETURNING refunded_transaction_id
            """, [store.rawValue, PostgresArray(refunds.map(\.transactionID)),
                  PostgresArray(refunds.map(\.refund.amount.minorUnits)), PostgresArray(refunds.map(\.refund.amount.currency)),
                  PostgresArray(refunds.map(\.refund.kind)), PostgresArray(refunds.map(\.refund.reason)),
                  PostgresArray(refunds.map(\.refund.refundedAt)), asOf])
            .map { try $0.decode(0) }
    }
}
