import Foundation
import Postgres
import StoreModel

/// An entitlement key a customer holds: the grant that lasts longest names it, and every granting
/// subscription is listed, as the product spec's entitlement reads answer.
public struct Entitlement: Sendable, Equatable {
    public let key: String
    /// Longest first (`EntitlementRules.longestFirst`); never empty.
    public let grants: [EntitlementGrant]

    public var longest: EntitlementGrant { grants[0] }
}

extension Entitlement {
    /// The entitlements `customerID` holds at the database's `now()`: every subscription of the customer, from
    /// any source, whose plan grants a key and which entitles by `EntitlementRules`.
    public static func held(by customerID: String, on db: isolated PostgresConnection) throws -> [Entitlement] {
        try db.query(holding(customerID))
    }

    /// `held(by:)` as a query, to send with others in one round trip (the API's reads).
    public static func holding(_ customerID: String) -> PostgresQuery<[Entitlement]> {
        holding(customer: "$1::uuid", [customerID])
    }

    /// The entitlements of the customer an active account token of `host`'s account stands for (none for any
    /// other token), so an app's read can go in the round trip that authenticates its pair.
    public static func holding(customerOfAccountToken token: String, host: String) -> PostgresQuery<[Entitlement]> {
        holding(customer: """
            (SELECT t.customer_id FROM account_tokens t JOIN accounts a ON a.id = t.account_id AND a.host = $2
             WHERE t.token = $1::uuid AND t.status = 'active')
            """, [token, host])
    }

    private static func holding(customer: String, _ parameters: [any PostgresEncodable]) -> PostgresQuery<[Entitlement]> {
        PostgresQuery("""
            SELECT e.key, s.id, s.source, s.status, s.store_state, s.expires_at, s.grace_ends_at, s.cancelled_at, now()
            FROM customer_subscriptions s
            JOIN plan_prices pp ON pp.id = s.plan_price_id
            JOIN plan_entitlements pe ON pe.plan_id = pp.plan_id
            JOIN entitlements e ON e.id = pe.entitlement_id
            WHERE s.customer_id = \(customer)
            ORDER BY e.key, s.id
            """, parameters, decode: entitlements(from:))
    }

    private static func entitlements(from rows: PostgresRows) throws -> [Entitlement] {
        var grantsByKey: [(key: String, grants: [EntitlementGrant])] = []
        for row in rows {
            let key: String = try row.decode(0)
            let subject = try EntitlementSubject(
                subscriptionID: row.decode(1), source: Self.decode(SubscriptionSource.self, row, 2),
                status: Self.decode(SubscriptionStatus.self, row, 3),
                storeState: row.decodeOptional(4, as: String.self).map { try Self.parse(StoreState.self, $0) },
                expiresAt: row.decodeOptional(5), graceEndsAt: row.decodeOptional(6), cancelledAt: row.decodeOptional(7))
            guard let grant = EntitlementRules.grant(subject, at: try row.decode(8)) else { continue }
            if grantsByKey.last?.key == key {
                grantsByKey[grantsByKey.count - 1].grants.append(grant)
            } else {
                grantsByKey.append((key, [grant]))
            }
        }
        return grantsByKey.map { Entitlement(key: $0.key, grants: EntitlementRules.longestFirst($0.grants)) }
    }

    private static func decode<T: RawRepresentable>(_: T.Type, _ row: PostgresRow, _ column: Int) throws -> T
        where T.RawValue == String
    {
        try parse(T.self, row.decode(column))
    }

    private static func parse<T: RawRepresentable>(_: T.Type, _ text: String) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: text) else {
            throw PostgresError(.decoding, message: "customer_subscriptions holds \(T.self) \(text), which this version does not know")
        }
        return value
    }
}
