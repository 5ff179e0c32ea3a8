import StoreModel

/// SubscriptionFlow's status of a store-backed subscription. It follows the store's state; entitlement
/// follows the store state itself, never this.
public enum SubscriptionStatus: String, Sendable, Equatable, CaseIterable {
    case trial
    case active
    case cancelled
    case expired

    /// Expired once the store says expired or revoked; Cancelled while auto-renew is off and the period
    /// still runs; Trial during a free-trial period; Active otherwise — billing retry (on hold) included,
    /// since that is dunning, not an end.
    public static func following(state: StoreState, autoRenew: Bool, inFreeTrial: Bool) -> SubscriptionStatus {
        switch state {
        case .expired, .revoked: return .expired
        case .onHold: return .active
        case .active, .grace, .paused:
            if !autoRenew { return .cancelled }
            return inFreeTrial ? .trial : .active
        }
    }
}
