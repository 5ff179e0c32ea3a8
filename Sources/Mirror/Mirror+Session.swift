import Accounts
import Foundation
import Postgres
import StoreModel

/// An entitlement a sandbox purchase grants in the app's session alone: the sandbox-in-session rule lets an
/// App Review, TestFlight or licence-tester purchase on a Production connection unlock the app without ever
/// becoming a customer subscription, so there is no subscription to name.
public struct SessionEntitlement: Sendable, Equatable {
    public let key: String
    public let source: SubscriptionSource
    /// Nil: it renews.
    public let expiresAt: Date?
}

extension Mirror {
    /// The entitlements `snapshot` — a sandbox purchase read for a Production `connection` — would grant
    /// `claimant`, decided by the very rules `apply` follows (the product's mapping on the connection, the
    /// ownership rules for a claimant, `EntitlementRules` on the store's state) while writing nothing: no
    /// purchase, subscription, invoice, link or timeline row, and no lock. Empty when the purchase does not
    /// entitle now.
    ///
    /// Throws `MirrorError(.productNotMapped)` and `.ownershipConflict` as `apply` would.
    public static func sessionEntitlements(_ snapshot: StoreSnapshot, connection: StoreConnection, claimant: String,
                                           on db: isolated PostgresConnection) throws -> [SessionEntitlement] {
        try requireSameStore(snapshot, connection)
        let read = KnownState.statement(snapshot: snapshot, connectionID: connection.id, accountID: connection.accountID)
        let known = try KnownState(snapshot: snapshot, row: db.query([read])[0][0])
        _ = try MirrorPlan(snapshot, known: known, connectionID: connection.id,
                           requireIssuedTokens: connection.requireIssuedTokens, claimant: claimant)
        guard let planPriceID = known.planPriceID else { preconditionFailure("MirrorPlan refuses an unmapped product") }
        let rows = try db.query("""
            SELECT e.key, now() FROM plan_prices pp
            JOIN plan_entitlements pe ON pe.plan_id = pp.plan_id
            JOIN entitlements e ON e.id = pe.entitlement_id
            WHERE pp.id = $1 ORDER BY e.key
            """, [planPriceID])
        let source: SubscriptionSource = snapshot.store == .apple ? .apple : .google
        return try rows.compactMap { row in
            let subject = EntitlementSubject(subscriptionID: 0, source: source, status: .active, storeState: snapshot.state,
                                             expiresAt: snapshot.expiresAt, graceEndsAt: snapshot.graceEndsAt, cancelledAt: nil)
            return try EntitlementRules.grant(subject, at: row.decode(1)).map {
                SessionEntitlement(key: try row.decode(0), source: source, expiresAt: $0.expiresAt)
            }
        }
    }
}
