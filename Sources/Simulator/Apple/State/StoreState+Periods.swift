import Foundation

/// Purchases and the end of each period: buying, renewing, failing to renew, recovering, expiring.
extension StoreState {
    struct Purchase {
        var bundleID: String?
        var productId: String
        var price: Int64
        var currency: String
        var appAccountToken: UUID?
        var freeTrial = false
        var familyShared = false
    }

    /// `SUBSCRIBED/INITIAL_BUY`: a new lineage whose first period starts now (a free trial's is free).
    mutating func subscribe(_ purchase: Purchase) throws -> ScenarioEvent {
        let app = try app(purchase.bundleID)
        try Self.checkProduct(purchase.productId)
        try Self.checkPrice(purchase.price, currency: purchase.currency)
        let id = newTransactionID()
        let expires = now.adding(purchase.freeTrial ? app.freeTrialPeriod : app.renewalPeriod(of: purchase.productId))
        let transaction = SimulatedTransaction(
            transactionId: id, originalTransactionId: id, webOrderLineItemId: newLineItemID(), bundleId: app.bundleID,
            productId: purchase.productId, subscriptionGroupIdentifier: app.subscriptionGroupIdentifier,
            purchaseDate: now, originalPurchaseDate: now, expiresDate: expires,
            inAppOwnershipType: purchase.familyShared ? .familyShared : .purchased, appAccountToken: purchase.appAccountToken,
            price: purchase.freeTrial ? 0 : purchase.price, currency: purchase.currency, transactionReason: .purchase,
            offer: purchase.freeTrial ? .freeTrial : nil, environment: app.environment, storefront: app.storefront,
            storefrontId: app.storefrontID)
        store(transaction)
        let renewal = SimulatedRenewalInfo(
            originalTransactionId: id, productId: purchase.productId, autoRenewProductId: purchase.productId,
            autoRenewStatus: true, expirationIntent: nil, isInBillingRetryPeriod: false, gracePeriodExpiresDate: nil,
            renewalDate: expires, recentSubscriptionStartDate: now, renewalPrice: purchase.price, currency: purchase.currency,
            environment: app.environment, appAccountToken: purchase.appAccountToken)
        let subscription = SimulatedSubscription(originalTransactionId: id, bundleId: app.bundleID,
                                                 subscriptionGroupIdentifier: app.subscriptionGroupIdentifier,
                                                 status: .active, renewalInfo: renewal, transactionIds: [id])
        store(subscription)
        return event("SUBSCRIBED", "INITIAL_BUY", subscription)
    }

    /// `SUBSCRIBED/RESUBSCRIBE`: an expired or revoked lineage is bought again, from now; the product and price
    /// default to what it would have renewed with.
    mutating func resubscribe(_ originalTransactionId: String, productId: String?, price: Int64?) throws -> ScenarioEvent {
        var subscription = try subscription(originalTransactionId)
        guard subscription.status == .expired || subscription.status == .revoked else {
            throw SimulatorError(.invalidState, "only an expired or revoked subscription can be bought again; it is \(subscription.status)")
        }
        let product = productId ?? subscription.renewalInfo.autoRenewProductId
        let charge = price ?? subscription.renewalInfo.renewalPrice
        try Self.checkProduct(product)
        try Self.checkPrice(charge, currency: subscription.renewalInfo.currency)
        let previous = latestTransaction(of: subscription)
        // Apple's recentSubscriptionStartDate ignores lapses shorter than 60 days.
        if now.milliseconds - previous.expiresDate.milliseconds >= 60 * 86_400_000 {
            subscription.renewalInfo.recentSubscriptionStartDate = now
        }
        let transaction = newPeriod(of: &subscription, productId: product, price: charge, start: now, reason: .purchase)
        subscription.renewalInfo.autoRenewStatus = true
        subscription.renewalInfo.autoRenewProductId = product
        subscription.renewalInfo.renewalPrice = charge
        subscription.beforeRevocation = nil
        subscription.status = .active
        store(subscription)
        return event("SUBSCRIBED", "RESUBSCRIBE", subscription, transaction: transaction)
    }

    /// `DID_RENEW`: the next period is bought at its boundary (the clock moves there if it is earlier), with
    /// the renewal product and price (so a pending downgrade takes effect).
    mutating func renew(_ originalTransactionId: String) throws -> ScenarioEvent {
        var subscription = try renewable(originalTransactionId, "renew")
        let boundary = latestTransaction(of: subscription).expiresDate
        advanceClock(to: boundary)
        let transaction = newPeriod(of: &subscription, productId: subscription.renewalInfo.autoRenewProductId,
                                    price: subscription.renewalInfo.renewalPrice, start: boundary, reason: .renewal)
        store(subscription)
        return event("DID_RENEW", nil, subscription, transaction: transaction)
    }

    /// `DID_FAIL_TO_RENEW` (`GRACE_PERIOD` with `grace`): billing fails at the period's boundary; billing retry
    /// starts, with a billing grace period when asked for.
    mutating func failToRenew(_ originalTransactionId: String, grace: Bool) throws -> ScenarioEvent {
        var subscription = try renewable(originalTransactionId, "fail to renew")
        let app = app(of: subscription)
        let boundary = latestTransaction(of: subscription).expiresDate
        advanceClock(to: boundary)
        subscription.renewalInfo.isInBillingRetryPeriod = true
        subscription.renewalInfo.expirationIntent = 2
        subscription.renewalInfo.gracePeriodExpiresDate = grace ? boundary.adding(app.gracePeriod) : nil
        subscription.status = grace ? .gracePeriod : .billingRetry
        store(subscription)
        return event("DID_FAIL_TO_RENEW", grace ? "GRACE_PERIOD" : nil, subscription)
    }

    /// `GRACE_PERIOD_EXPIRED`: the grace period ends (the clock moves to its end); billing retry goes on.
    mutating func expireGracePeriod(_ originalTransactionId: String) throws -> ScenarioEvent {
        var subscription = try subscription(originalTransactionId)
        guard subscription.status == .gracePeriod, let end = subscription.renewalInfo.gracePeriodExpiresDate else {
            throw SimulatorError(.invalidState, "the subscription is not in a billing grace period; it is \(subscription.status)")
        }
        advanceClock(to: end)
        subscription.status = .billingRetry
        store(subscription)
        return event("GRACE_PERIOD_EXPIRED", nil, subscription)
    }

    /// `DID_RENEW/BILLING_RECOVERY`: billing succeeds again. Recovered within the grace period the renewal date
    /// stays; recovered later, the new period starts now.
    mutating func recover(_ originalTransactionId: String) throws -> ScenarioEvent {
        var subscription = try subscription(originalTransactionId)
        guard subscription.status == .billingRetry || subscription.status == .gracePeriod else {
            throw SimulatorError(.invalidState, "only a subscription in billing retry can recover; it is \(subscription.status)")
        }
        let start = subscription.status == .gracePeriod ? latestTransaction(of: subscription).expiresDate : now
        let transaction = newPeriod(of: &subscription, productId: subscription.renewalInfo.autoRenewProductId,
                                    price: subscription.renewalInfo.renewalPrice, start: start, reason: .renewal)
        store(subscription)
        return event("DID_RENEW", "BILLING_RECOVERY", subscription, transaction: transaction)
    }

    /// `EXPIRED` with the reason's subtype. Voluntary expiry needs auto-renew off, billing-retry expiry a
    /// subscription in billing retry; the others end an active subscription at its boundary.
    mutating func expire(_ originalTransactionId: String, reason: ExpirationReason) throws -> ScenarioEvent {
        var subscription = try subscription(originalTransactionId)
        let inBillingRetry = subscription.status == .billingRetry || subscription.status == .gracePeriod
        switch reason {
        case .billingRetry:
            guard inBillingRetry else {
                throw SimulatorError(.invalidState, "billing retry can only end for a subscription in billing retry; it is \(subscription.status)")
            }
        case .voluntary:
            guard subscription.status == .active, !subscription.renewalInfo.autoRenewStatus else {
                throw SimulatorError(.invalidState, "a voluntary expiry needs an active subscription with auto-renew off (cancel first)")
            }
        case .priceIncrease, .productNotForSale:
            guard subscription.status == .active else {
                throw SimulatorError(.invalidState, "only an active subscription can expire for \(reason.rawValue); it is \(subscription.status)")
            }
        case .other:
            guard subscription.status == .active || inBillingRetry else {
                throw SimulatorError(.invalidState, "the subscription has already ended; it is \(subscription.status)")
            }
        }
        if subscription.status == .active { advanceClock(to: latestTransaction(of: subscription).expiresDate) }
        subscription.renewalInfo.expirationIntent = reason.expirationIntent
        subscription.renewalInfo.isInBillingRetryPeriod = false
        subscription.renewalInfo.gracePeriodExpiresDate = nil
        subscription.status = .expired
        store(subscription)
        return event("EXPIRED", reason.subtype, subscription)
    }

    // MARK: Helpers

    /// An active subscription that will renew: what renewing or failing to renew starts from.
    private func renewable(_ originalTransactionId: String, _ what: String) throws -> SimulatedSubscription {
        let subscription = try subscription(originalTransactionId)
        guard subscription.status == .active else {
            throw SimulatorError(.invalidState, "cannot \(what): the subscription is \(subscription.status)"
                                 + (subscription.status == .billingRetry || subscription.status == .gracePeriod
                                     ? " (recover or expire it)" : ""))
        }
        guard subscription.renewalInfo.autoRenewStatus else {
            throw SimulatorError(.invalidState, "cannot \(what): auto-renew is off (resume it, or expire VOLUNTARY)")
        }
        return subscription
    }

    /// Adds the transaction of a new paid period of `productId` (its own length) starting at `start` and points
    /// the renewal info at it.
    mutating func newPeriod(of subscription: inout SimulatedSubscription, productId: String, price: Int64, start: Date,
                            reason: SimulatedTransaction.Reason) -> SimulatedTransaction {
        let app = app(of: subscription)
        var transaction = latestTransaction(of: subscription)
        transaction.transactionId = newTransactionID()
        transaction.webOrderLineItemId = newLineItemID()
        transaction.productId = productId
        transaction.price = price
        transaction.purchaseDate = start
        transaction.expiresDate = start.adding(app.renewalPeriod(of: productId))
        transaction.transactionReason = reason
        transaction.offer = nil
        transaction.isUpgraded = false
        transaction.revocation = nil
        store(transaction)
        subscription.transactionIds.append(transaction.transactionId)
        subscription.renewalInfo.productId = productId
        subscription.renewalInfo.renewalDate = transaction.expiresDate
        subscription.renewalInfo.expirationIntent = nil
        subscription.renewalInfo.isInBillingRetryPeriod = false
        subscription.renewalInfo.gracePeriodExpiresDate = nil
        subscription.status = .active
        return transaction
    }
}
