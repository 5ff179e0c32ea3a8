import Foundation

/// Scenario commands. Each changes the simulated App Store as Apple would, then — unless `silent` — signs
/// the V2 notification Apple sends for it, posts it to the notification target and waits for the answer
/// (`ScenarioResult.notification`). A silent command changes state only, as a missed notification would
/// leave StoreSync: what resync tests need. A command that does not fit the subscription's state throws
/// `SimulatorError` (`.invalidState`) and changes nothing.
extension AppStoreSimulator {
    /// `SUBSCRIBED/INITIAL_BUY`: a new subscription (a new `originalTransactionId`) starting now. `price` is in
    /// milliunits of `currency`; a free trial's first period costs 0 and renews at `price`.
    @discardableResult
    public func subscribe(bundleID: String? = nil, productId: String, price: Int64, currency: String,
                          appAccountToken: UUID? = nil, freeTrial: Bool = false, familyShared: Bool = false,
                          silent: Bool = false) async throws -> ScenarioResult {
        let purchase = StoreState.Purchase(bundleID: bundleID, productId: productId, price: price, currency: currency,
                                           appAccountToken: appAccountToken, freeTrial: freeTrial, familyShared: familyShared)
        return try await core.run(silent: silent) { try $0.subscribe(purchase) }
    }

    /// `SUBSCRIBED/RESUBSCRIBE`: an expired or revoked subscription bought again from now.
    @discardableResult
    public func resubscribe(_ originalTransactionId: String, productId: String? = nil, price: Int64? = nil,
                            silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) { try $0.resubscribe(originalTransactionId, productId: productId, price: price) }
    }

    /// `DID_RENEW`: the next period, bought at the current one's end (the clock moves there if earlier).
    @discardableResult
    public func renew(_ originalTransactionId: String, silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) { try $0.renew(originalTransactionId) }
    }

    /// `DID_FAIL_TO_RENEW` (subtype `GRACE_PERIOD` with `grace`): billing fails at the period's end.
    @discardableResult
    public func failToRenew(_ originalTransactionId: String, grace: Bool = false, silent: Bool = false) async throws
        -> ScenarioResult
    {
        try await core.run(silent: silent) { try $0.failToRenew(originalTransactionId, grace: grace) }
    }

    /// `GRACE_PERIOD_EXPIRED`: the billing grace period ends; billing retry continues.
    @discardableResult
    public func expireGracePeriod(_ originalTransactionId: String, silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) { try $0.expireGracePeriod(originalTransactionId) }
    }

    /// `DID_RENEW/BILLING_RECOVERY`: billing succeeds after a failure.
    @discardableResult
    public func recover(_ originalTransactionId: String, silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) { try $0.recover(originalTransactionId) }
    }

    /// `EXPIRED` with the reason's subtype.
    @discardableResult
    public func expire(_ originalTransactionId: String, reason: ExpirationReason, silent: Bool = false) async throws
        -> ScenarioResult
    {
        try await core.run(silent: silent) { try $0.expire(originalTransactionId, reason: reason) }
    }

    /// `DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED`.
    @discardableResult
    public func cancel(_ originalTransactionId: String, silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) { try $0.cancel(originalTransactionId) }
    }

    /// `DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED`.
    @discardableResult
    public func resume(_ originalTransactionId: String, silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) { try $0.resume(originalTransactionId) }
    }

    /// `DID_CHANGE_RENEWAL_PREF/UPGRADE`: immediate; the old transaction is marked `isUpgraded` and its unused
    /// share refunded (prorated).
    @discardableResult
    public func upgrade(_ originalTransactionId: String, to productId: String, price: Int64, silent: Bool = false)
        async throws -> ScenarioResult
    {
        try await core.run(silent: silent) { try $0.upgrade(originalTransactionId, to: productId, price: price) }
    }

    /// `DID_CHANGE_RENEWAL_PREF/DOWNGRADE`: the next renewal buys `productId` at `price`; choosing the current
    /// product again cancels a pending downgrade (no subtype).
    @discardableResult
    public func downgrade(_ originalTransactionId: String, to productId: String, price: Int64, silent: Bool = false)
        async throws -> ScenarioResult
    {
        try await core.run(silent: silent) { try $0.downgrade(originalTransactionId, to: productId, price: price) }
    }

    /// `REFUND` of `transactionId` (default: the current period's): full, or prorated with `percentage` in
    /// milliunits (1…99999). `revocationReason` is 0 (other) or 1 (an issue with the app). A family-shared
    /// transaction is refused (as by `declineRefund` and `requestConsumption`): only the purchaser can ask for a
    /// refund; when the purchaser is refunded, the family member loses access by `revokeFamilySharing`.
    @discardableResult
    public func refund(_ originalTransactionId: String, transactionId: String? = nil, percentage: Int? = nil,
                       revocationReason: Int = 0, silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) {
            try $0.refund(originalTransactionId, transactionId: transactionId, percentage: percentage, reason: revocationReason)
        }
    }

    /// `REFUND_DECLINED`: nothing changes.
    @discardableResult
    public func declineRefund(_ originalTransactionId: String, transactionId: String? = nil, silent: Bool = false)
        async throws -> ScenarioResult
    {
        try await core.run(silent: silent) { try $0.declineRefund(originalTransactionId, transactionId: transactionId) }
    }

    /// `REFUND_REVERSED` of `transactionId` (default: the latest refunded one): the status the refund interrupted
    /// returns (active, billing grace period, billing retry), unless the clock has passed its end meanwhile.
    @discardableResult
    public func reverseRefund(_ originalTransactionId: String, transactionId: String? = nil, silent: Bool = false)
        async throws -> ScenarioResult
    {
        try await core.run(silent: silent) { try $0.reverseRefund(originalTransactionId, transactionId: transactionId) }
    }

    /// `CONSUMPTION_REQUEST` for `transactionId` (default: the current period's).
    @discardableResult
    public func requestConsumption(_ originalTransactionId: String, transactionId: String? = nil,
                                   reason: ConsumptionRequestReason, silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) {
            try $0.requestConsumption(originalTransactionId, transactionId: transactionId, reason: reason)
        }
    }

    /// `REVOKE`: a family-shared subscription is taken away from the family member.
    @discardableResult
    public func revokeFamilySharing(_ originalTransactionId: String, silent: Bool = false) async throws -> ScenarioResult {
        try await core.run(silent: silent) { try $0.revokeFamilySharing(originalTransactionId) }
    }

    /// Posts the most recent notification again, byte for byte, `times` times: Apple's retries and duplicates.
    @discardableResult
    public func resendLastNotification(times: Int = 1) async throws -> [NotificationRecord] {
        try await core.resendLast(times: times)
    }
}
