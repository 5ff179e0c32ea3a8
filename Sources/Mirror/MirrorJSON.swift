import Foundation
import Logging

// What the mirror's reads look like as JSON, written once for every face that shows them (the CLI's
// `customers show --json`, the Mobile Stores API), so the two can never disagree on a field.

extension Entitlement {
    /// The product spec's entitlement: its key, the longest grant's `source`, `subscription_id` and
    /// `expires_at` (null: renews or has no end), and every grant under `grants`, longest first.
    public var json: JSONValue {
        .object([("key", .string(key))] + longest.fields + [("grants", .array(grants.map { .object($0.fields) }))])
    }
}

extension EntitlementGrant {
    var fields: [(String, JSONValue)] {
        [("source", .string(source.rawValue)), ("subscription_id", .int(Int(subscriptionID))),
         ("expires_at", .time(expiresAt))]
    }
}

extension CustomerSummary.Subscription {
    /// A customer subscription with its plan, price (an exact decimal string and its currency, with the
    /// integer minor units beside it), SubscriptionFlow's status, the store's state and times, and the store
    /// purchase it mirrors.
    public var json: JSONValue {
        .object([
            ("id", .int(Int(id))), ("source", .string(source)), ("plan", .string(planCode)),
            ("plan_price", .string(priceCode)), ("amount", .string(price.decimal)),
            ("amount_minor", .int(Int(price.minorUnits))), ("currency", .string(price.currency)),
            ("status", .string(status)), ("store_state", storeState.map { .string($0) } ?? .null),
            ("current_period_end", .time(currentPeriodEnd)), ("expires_at", .time(expiresAt)),
            ("grace_ends_at", .time(graceEndsAt)), ("auto_renew", .bool(autoRenew)), ("cancelled_at", .time(cancelledAt)),
            ("connection_id", connectionID.map { .int(Int($0)) } ?? .null), ("lineage", lineage.map { .string($0) } ?? .null),
        ])
    }
}

extension SessionEntitlement {
    /// An entitlement's shape with no subscription behind it (`subscription_id` null) and `"sandbox": true`,
    /// so an app can tell it holds it for this session only.
    public var json: JSONValue {
        let fields: [(String, JSONValue)] = [("source", .string(source.rawValue)), ("subscription_id", .null),
                                             ("expires_at", .time(expiresAt))]
        return .object([("key", .string(key))] + fields + [("grants", .array([.object(fields)])), ("sandbox", .bool(true))])
    }
}
