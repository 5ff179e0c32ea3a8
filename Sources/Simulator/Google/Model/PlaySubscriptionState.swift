/// `SubscriptionPurchaseV2.subscriptionState`, with Google's enum names as raw values.
public enum PlaySubscriptionState: String, Sendable, Codable, CaseIterable {
    case pending = "SUBSCRIPTION_STATE_PENDING"
    case active = "SUBSCRIPTION_STATE_ACTIVE"
    case paused = "SUBSCRIPTION_STATE_PAUSED"
    case inGracePeriod = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD"
    case onHold = "SUBSCRIPTION_STATE_ON_HOLD"
    /// Auto-renew is off; access continues until `expiryTime`.
    case canceled = "SUBSCRIPTION_STATE_CANCELED"
    case expired = "SUBSCRIPTION_STATE_EXPIRED"
    case pendingPurchaseCanceled = "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"
}

/// `SubscriptionNotification.notificationType` of a Real-time developer notification (google.md §2.1). The
/// simulator sends the lifecycle ones; the others are listed so every number Google assigns has its name.
public enum SubscriptionNotificationType: Int, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case recovered = 1
    case renewed = 2
    case canceled = 3
    case purchased = 4
    case onHold = 5
    case inGracePeriod = 6
    case restarted = 7
    case priceChangeConfirmed = 8
    case deferred = 9
    case paused = 10
    case pauseScheduleChanged = 11
    case revoked = 12
    case expired = 13
    case itemsChanged = 17
    case cancellationScheduled = 18
    case priceChangeUpdated = 19
    case pendingPurchaseCanceled = 20
    case priceStepUpConsentUpdated = 22

    public var description: String {
        switch self {
        case .recovered: "SUBSCRIPTION_RECOVERED"
        case .renewed: "SUBSCRIPTION_RENEWED"
        case .canceled: "SUBSCRIPTION_CANCELED"
        case .purchased: "SUBSCRIPTION_PURCHASED"
        case .onHold: "SUBSCRIPTION_ON_HOLD"
        case .inGracePeriod: "SUBSCRIPTION_IN_GRACE_PERIOD"
        case .restarted: "SUBSCRIPTION_RESTARTED"
        case .priceChangeConfirmed: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED"
        case .deferred: "SUBSCRIPTION_DEFERRED"
        case .paused: "SUBSCRIPTION_PAUSED"
        case .pauseScheduleChanged: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED"
        case .revoked: "SUBSCRIPTION_REVOKED"
        case .expired: "SUBSCRIPTION_EXPIRED"
        case .itemsChanged: "SUBSCRIPTION_ITEMS_CHANGED"
        case .cancellationScheduled: "SUBSCRIPTION_CANCELLATION_SCHEDULED"
        case .priceChangeUpdated: "SUBSCRIPTION_PRICE_CHANGE_UPDATED"
        case .pendingPurchaseCanceled: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED"
        case .priceStepUpConsentUpdated: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED"
        }
    }
}

/// Who ended the renewals, as `canceledStateContext` tells it.
public enum PlayCancellation: Sendable, Equatable {
    /// The user cancelled in the Play Store (`userInitiatedCancellation.cancelTime`).
    case user(cancelTime: Int64)
    /// Google cancelled, e.g. when account hold ran out (`systemInitiatedCancellation`).
    case system
    /// The developer cancelled or revoked (`developerInitiatedCancellation`).
    case developer
    /// Another purchase replaced this one: an upgrade or downgrade (`replacementCancellation`).
    case replacement
}

/// Who ends the renewals in a `cancel` scenario.
public enum PlayCancellationSource: String, Sendable, Codable {
    case user
    case system
    case developer
}
