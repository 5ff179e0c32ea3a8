import Foundation
import StoreModel

/// Where a customer subscription comes from: a store the mirror follows, or SubscriptionFlow's own web billing.
public enum SubscriptionSource: String, Sendable, Hashable, CaseIterable {
    case apple
    case google
    case web
}

/// One customer subscription as the entitlement rules read it.
public struct EntitlementSubject: Sendable, Equatable {
    public let subscriptionID: Int64
    public let source: SubscriptionSource
    public let status: SubscriptionStatus
    /// The store's state; `nil` for a web subscription.
    public let storeState: StoreState?
    public let expiresAt: Date?
    public let graceEndsAt: Date?
    public let cancelledAt: Date?

    public init(subscriptionID: Int64, source: SubscriptionSource, status: SubscriptionStatus, storeState: StoreState?,
                expiresAt: Date?, graceEndsAt: Date?, cancelledAt: Date?) {
        self.subscriptionID = subscriptionID
        self.source = source
        self.status = status
        self.storeState = storeState
        self.expiresAt = expiresAt
        self.graceEndsAt = graceEndsAt
        self.cancelledAt = cancelledAt
    }
}

/// A subscription that entitles now, and until when (`nil`: it renews or has no end).
public struct EntitlementGrant: Sendable, Equatable {
    public let source: SubscriptionSource
    public let subscriptionID: Int64
    public let expiresAt: Date?

    public init(source: SubscriptionSource, subscriptionID: Int64, expiresAt: Date?) {
        self.source = source
        self.subscriptionID = subscriptionID
        self.expiresAt = expiresAt
    }
}

/// The product spec's entitlement rules, one place for every reader. Store-backed subscriptions follow the
/// store, not SubscriptionFlow's status: active until the store's expiry, grace until the store's grace end;
/// on hold, paused, expired and revoked never entitle. Web subscriptions entitle while Active or Trial
/// (unless `cancelled_at` has passed — dunning keeps them Active) or Cancelled while `cancelled_at` is ahead.
public enum EntitlementRules {
    /// Whether `subject` entitles at `now`, and until when.
    public static func grant(_ subject: EntitlementSubject, at now: Date) -> EntitlementGrant? {
        let end: Date?
        switch subject.source {
        case .apple, .google:
            guard let state = subject.storeState, state.entitles else { return nil }
            end = state == .grace ? subject.graceEndsAt ?? subject.expiresAt : subject.expiresAt
        case .web:
            switch subject.status {
            case .active, .trial: end = subject.cancelledAt
            case .cancelled:
                guard let cancelledAt = subject.cancelledAt else { return nil }
                end = cancelledAt
            case .expired: return nil
            }
        }
        if let end, end <= now { return nil }
        return EntitlementGrant(source: subject.source, subscriptionID: subject.subscriptionID, expiresAt: end)
    }

    /// `grants` longest first: no end before any end, then the latest end; equal ends by subscription id, so
    /// every reader names the same grant.
    public static func longestFirst(_ grants: [EntitlementGrant]) -> [EntitlementGrant] {
        grants.sorted { a, b in
            switch (a.expiresAt, b.expiresAt) {
            case (nil, nil): return a.subscriptionID < b.subscriptionID
            case (nil, _?): return true
            case (_?, nil): return false
            case let (x?, y?): return x != y ? x > y : a.subscriptionID < b.subscriptionID
            }
        }
    }
}
