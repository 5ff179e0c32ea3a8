/// Scenario commands. Each changes the simulated Play Store as Google would, then — unless `silent` — pushes
/// the Real-time developer notification(s) Google sends for it and waits for each one's first delivery
/// (`PlayScenarioResult.pushes`). A silent command changes state only, as a lost notification would leave
/// StoreSync: what resync tests need. A command that does not fit the subscription's state throws
/// `SimulatorError` (`.invalidState`) and changes nothing. Prices are minor units of `currency`, tax included.
extension PlaySimulator {
    /// `SUBSCRIPTION_PURCHASED` (4): a new purchase token, its first period starting now. A licence tester's
    /// purchase (`testPurchase`) carries `testPurchase: {}`, runs on accelerated periods and is untaxed.
    @discardableResult
    public func purchase(packageName: String? = nil, productId: String, basePlanId: String, offerId: String? = nil,
                         price: Int64, tax: Int64 = 0, currency: String, obfuscatedAccountId: String? = nil,
                         obfuscatedProfileId: String? = nil, testPurchase: Bool = false, regionCode: String? = nil,
                         silent: Bool = false) async throws -> PlayScenarioResult {
        let purchase = PlayState.Purchase(packageName: packageName, productId: productId, basePlanId: basePlanId, offerId: offerId,
                                          price: price, tax: tax, currency: currency, obfuscatedAccountId: obfuscatedAccountId,
                                          obfuscatedProfileId: obfuscatedProfileId, testPurchase: testPurchase,
                                          regionCode: regionCode)
        return try await core.run(silent: silent) { try $0.purchase(purchase) }
    }

    /// `SUBSCRIPTION_RENEWED` (2): the next period, charged at the current one's end with order `..N`. With
    /// `skippingOrderNumber` the order is `..N+1` and no order `..N` exists, as Google numbers a renewal after a
    /// period that was never charged.
    @discardableResult
    public func renew(_ purchaseToken: String, skippingOrderNumber: Bool = false, silent: Bool = false) async throws
        -> PlayScenarioResult
    {
        try await core.run(silent: silent) { try $0.renew(purchaseToken, skippingOrderNumber: skippingOrderNumber) }
    }

    /// `SUBSCRIPTION_IN_GRACE_PERIOD` (6): the renewal payment is declined; access continues for the grace period.
    @discardableResult
    public func enterGracePeriod(_ purchaseToken: String, silent: Bool = false) async throws -> PlayScenarioResult {
        try await core.run(silent: silent) { try $0.enterGracePeriod(purchaseToken) }
    }

    /// `SUBSCRIPTION_ON_HOLD` (5): the payment is declined (or the grace period ends) and access stops.
    @discardableResult
    public func enterAccountHold(_ purchaseToken: String, silent: Bool = false) async throws -> PlayScenarioResult {
        try await core.run(silent: silent) { try $0.enterAccountHold(purchaseToken) }
    }

    /// `SUBSCRIPTION_RECOVERED` (1): payment succeeds after a grace period or account hold, with a new order.
    @discardableResult
    public func recover(_ purchaseToken: String, silent: Bool = false) async throws -> PlayScenarioResult {
        try await core.run(silent: silent) { try $0.recover(purchaseToken) }
    }

    /// `SUBSCRIPTION_PAUSED` (10): a pause of `duration` starts at the period's end.
    @discardableResult
    public func pause(_ purchaseToken: String, for duration: Duration, silent: Bool = false) async throws -> PlayScenarioResult {
        try await core.run(silent: silent) { try $0.pause(purchaseToken, for: duration) }
    }

    /// `SUBSCRIPTION_RECOVERED` (1): a paused subscription resumes now, with a new order.
    @discardableResult
    public func resume(_ purchaseToken: String, silent: Bool = false) async throws -> PlayScenarioResult {
        try await core.run(silent: silent) { try $0.resume(purchaseToken) }
    }

    /// `SUBSCRIPTION_CANCELED` (3): renewals stop; access continues until the expiry time.
    @discardableResult
    public func cancel(_ purchaseToken: String, by source: PlayCancellationSource = .user, silent: Bool = false) async throws
        -> PlayScenarioResult
    {
        try await core.run(silent: silent) { try $0.cancel(purchaseToken, source: source) }
    }

    /// `SUBSCRIPTION_RESTARTED` (7): a cancelled subscription is restored before it expires.
    @discardableResult
    public func restart(_ purchaseToken: String, silent: Bool = false) async throws -> PlayScenarioResult {
        try await core.run(silent: silent) { try $0.restart(purchaseToken) }
    }

    /// `SUBSCRIPTION_EXPIRED` (13): a cancelled subscription, or one in grace period or on hold, runs out.
    @discardableResult
    public func expire(_ purchaseToken: String, silent: Bool = false) async throws -> PlayScenarioResult {
        try await core.run(silent: silent) { try $0.expire(purchaseToken) }
    }

    /// `SUBSCRIPTION_PURCHASED` (4) for a new token that replaces `purchaseToken` at once
    /// (`linkedPurchaseToken`, `CHARGE_PRORATED_PRICE`); the old token expires. The result names the new token.
    @discardableResult
    public func upgrade(_ purchaseToken: String, to productId: String, basePlanId: String, offerId: String? = nil,
                        price: Int64, tax: Int64 = 0, silent: Bool = false) async throws -> PlayScenarioResult {
        let replacement = PlayState.Replacement(productId: productId, basePlanId: basePlanId, offerId: offerId, price: price,
                                                tax: tax, mode: "CHARGE_PRORATED_PRICE")
        return try await core.run(silent: silent) { try $0.replace(purchaseToken, with: replacement) }
    }

    /// As `upgrade`, to a cheaper plan (`WITHOUT_PRORATION`), also taking effect at once.
    @discardableResult
    public func downgrade(_ purchaseToken: String, to productId: String, basePlanId: String, offerId: String? = nil,
                          price: Int64, tax: Int64 = 0, silent: Bool = false) async throws -> PlayScenarioResult {
        let replacement = PlayState.Replacement(productId: productId, basePlanId: basePlanId, offerId: offerId, price: price,
                                                tax: tax, mode: "WITHOUT_PRORATION")
        return try await core.run(silent: silent) { try $0.replace(purchaseToken, with: replacement) }
    }

    /// A refund of `orderId` (default: the latest successful order): `voidedPurchaseNotification` with
    /// `refundType` 1, or 2 for a `partialAmount` below what remains; with `revoke` the subscription also ends
    /// now and `SUBSCRIPTION_REVOKED` (12) follows. An order of a token Google no longer answers for
    /// (`expireLongAgo`) can still be refunded, without `revoke`.
    @discardableResult
    public func refund(_ purchaseToken: String, orderId: String? = nil, revoke: Bool = true, partialAmount: Int64? = nil,
                       source: VoidedSource = .developer, reason: VoidedReason = .other, silent: Bool = false) async throws
        -> PlayScenarioResult
    {
        let refund = PlayState.Refund(orderId: orderId, revoke: revoke, partialAmount: partialAmount, source: source, reason: reason)
        return try await core.run(silent: silent) { try $0.refund(purchaseToken, refund) }
    }

    /// `SUBSCRIPTION_EXPIRED` (13) for a token Google has forgotten: from now on the API answers 410 for it.
    @discardableResult
    public func expireLongAgo(_ purchaseToken: String, silent: Bool = false) async throws -> PlayScenarioResult {
        try await core.run(silent: silent) { try $0.expireLongAgo(purchaseToken) }
    }

    /// A `testNotification`, as Play Console's "Send test notification" publishes it.
    @discardableResult
    public func sendTestNotification(packageName: String? = nil) async throws -> PlayScenarioResult {
        try await core.sendTestNotification(packageName: packageName)
    }

    /// Delivers the most recent message again `times` times: duplicates with the same `messageId`.
    @discardableResult
    public func resendLastPush(times: Int = 1) async throws -> PlayPushRecord {
        try await core.pusher.resendLast(times: times)
    }
}
