/// Which app store a purchase, connection or snapshot belongs to.
public enum Store: String, Sendable, Hashable, Codable, CaseIterable {
    case apple
    case google
}

/// A store connection's environment, and a purchase's. Purchases are mirrored only where the two match, so
/// TestFlight, App Review and licence-tester purchases never become revenue in a production account.
public enum StoreEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"

    /// Accepts the spellings operators type as well as the stores' own (`Production`, `production`, `PROD`…).
    public init?(lenient text: String) {
        switch text.lowercased() {
        case "production", "prod": self = .production
        case "sandbox": self = .sandbox
        default: return nil
        }
    }
}

/// The store's own view of a subscription, which decides entitlement. SubscriptionFlow's status
/// (`SubscriptionStatus`) follows it but is not the same thing.
public enum StoreState: String, Sendable, Hashable, Codable, CaseIterable {
    case active
    case grace
    case onHold = "on_hold"
    case paused
    case expired
    case revoked

    /// App Store and Google Play subscriptions entitle only while active or in grace.
    public var entitles: Bool { self == .active || self == .grace }
}

/// Whether the purchaser paid or receives the subscription through Family Sharing; family-shared access is
/// mirrored but never booked as revenue.
public enum Ownership: String, Sendable, Hashable, Codable {
    case purchased
    case familyShared = "family_shared"
}
