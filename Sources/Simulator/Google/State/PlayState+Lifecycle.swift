/// Purchases and the end of each period: buying, renewing, billing failures and recovery, pausing,
/// cancelling, restarting, expiring.
extension PlayState {
    struct Purchase: Sendable {
        var packageName: String?
        var productId: String
        var basePlanId: String
        var offerId: String?
        /// Minor units of `currency`, tax included.
        var price: Int64
        var tax: Int64 = 0
        var currency: String
        var obfuscatedAccountId: String?
        var obfuscatedProfileId: String?
        var testPurchase = false
        var regionCode: String?
    }

    /// `SUBSCRIPTION_PURCHASED`: a new token whose first period starts now, with its purchase order.
    mutating func purchase(_ purchase: Purchase) throws -> PlayChange {
        let app = try app(purchase.packageName)
        try Self.checkIdentifier(purchase.productId, "productId")
        try Self.checkIdentifier(purchase.basePlanId, "basePlanId", maxLength: 63)
        if let offerId = purchase.offerId { try Self.checkIdentifier(offerId, "offerId", maxLength: 63) }
        try Self.checkPrice(purchase.price, tax: purchase.tax, currency: purchase.currency)
        for (name, value) in [("obfuscatedAccountId", purchase.obfuscatedAccountId),
                              ("obfuscatedProfileId", purchase.obfuscatedProfileId)] {
            if let value { try Self.checkIdentifier(value, name, maxLength: 64) }
        }
        let region = purchase.regionCode ?? app.regionCode
        guard PlaySimulatorConfiguration.isRegionCode(region) else {
            throw SimulatorError(.invalidArgument, "regionCode must be two capital letters")
        }
        let token = Self.newPurchaseToken()
        let orderId = newOrderID()
        let expiry = now + app.periods(test: purchase.testPurchase).renewal.wholeMilliseconds
        // Google computes no tax for licence testers.
        let tax = purchase.testPurchase ? 0 : purchase.tax
        let subscription = SimulatedPlaySubscription(
            purchaseToken: token, packageName: app.packageName, productId: purchase.productId, basePlanId: purchase.basePlanId,
            offerId: purchase.offerId, startTime: now, regionCode: region, state: .active, expiryTime: expiry,
            autoRenewEnabled: true, price: purchase.price, tax: tax, currency: purchase.currency, linkedPurchaseToken: nil,
            replacedBy: nil, obfuscatedAccountId: purchase.obfuscatedAccountId, obfuscatedProfileId: purchase.obfuscatedProfileId,
            testPurchase: purchase.testPurchase, acknowledged: false, orderIds: [orderId], renewalCount: 0, autoResumeTime: nil,
            cancellation: nil, paymentDeclinedAt: nil, accountHoldEnds: nil, replacement: nil, noLongerAvailable: false)
        store(subscription)
        addOrder(orderId, for: subscription, from: now, to: expiry)
        return change(subscription, .purchased, orderId: orderId)
    }

    /// `SUBSCRIPTION_RENEWED`: the next period is charged at the current one's end (the clock moves there),
    /// with a new order `{purchase order}..N`. A licence tester's purchase renews at most six times.
    mutating func renew(_ token: String, skippingOrderNumber: Bool = false) throws -> PlayChange {
        var subscription = try renewable(token, "renew")
        // Google leaves a renewal number without an order when that period was never charged.
        if skippingOrderNumber { subscription.renewalCount += 1 }
        guard !subscription.testPurchase || subscription.renewalCount < 6 else {
            throw SimulatorError(.invalidState, "a test purchase renews at most six times; cancel and expire it")
        }
        let boundary = subscription.expiryTime
        advanceClock(to: boundary)
        let orderId = newPeriod(of: &subscription, start: boundary)
        store(subscription)
        return change(subscription, .renewed, orderId: orderId)
    }

    /// `SUBSCRIPTION_IN_GRACE_PERIOD`: the renewal payment is declined at the period's end (the clock moves
    /// there); access continues for the grace period, which becomes the `expiryTime`.
    mutating func enterGracePeriod(_ token: String) throws -> PlayChange {
        var subscription = try renewable(token, "enter a grace period")
        let periods = app(of: subscription).periods(test: subscription.testPurchase)
        let boundary = subscription.expiryTime
        advanceClock(to: boundary)
        subscription.paymentDeclinedAt = boundary
        subscription.expiryTime = boundary + periods.grace.wholeMilliseconds
        subscription.state = .inGracePeriod
        store(subscription)
        return change(subscription, .inGracePeriod)
    }

    /// `SUBSCRIPTION_ON_HOLD`: access stops. From an active subscription the payment is declined at the
    /// period's end; from a grace period, the grace period ends. Either way the clock moves there.
    mutating func enterAccountHold(_ token: String) throws -> PlayChange {
        var subscription = try subscription(token)
        let periods = app(of: subscription).periods(test: subscription.testPurchase)
        switch subscription.state {
        case .active:
            subscription.paymentDeclinedAt = subscription.expiryTime
        case .inGracePeriod:
            break
        default:
            throw SimulatorError(.invalidState, "only an active subscription or one in its grace period can go on hold; it is \(subscription.state.rawValue)")
        }
        let holdStart = subscription.expiryTime
        advanceClock(to: holdStart)
        subscription.accountHoldEnds = holdStart + periods.hold.wholeMilliseconds
        subscription.state = .onHold
        store(subscription)
        return change(subscription, .onHold)
    }

    /// `SUBSCRIPTION_RECOVERED` after a payment problem: a new order for the next period. Recovered within the
    /// grace period the renewal date stays; recovered from account hold, the new period starts now.
    mutating func recover(_ token: String) throws -> PlayChange {
        var subscription = try subscription(token)
        let start: Int64
        switch subscription.state {
        case .inGracePeriod: start = subscription.paymentDeclinedAt ?? now
        case .onHold: start = now
        default:
            throw SimulatorError(.invalidState, "only a subscription in its grace period or on hold can recover; it is \(subscription.state.rawValue)")
        }
        let orderId = newPeriod(of: &subscription, start: start)
        store(subscription)
        return change(subscription, .recovered, orderId: orderId)
    }

    /// `SUBSCRIPTION_PAUSED`: the pause the user scheduled starts at the period's end (the clock moves there)
    /// and lasts `duration`; access stops meanwhile.
    mutating func pause(_ token: String, for duration: Duration) throws -> PlayChange {
        guard duration.wholeMilliseconds >= 1, duration <= .seconds(366 * 86_400) else {
            throw SimulatorError(.invalidArgument, "a pause lasts 1 ms to a year")
        }
        var subscription = try renewable(token, "pause")
        let boundary = subscription.expiryTime
        advanceClock(to: boundary)
        subscription.autoResumeTime = boundary + duration.wholeMilliseconds
        subscription.state = .paused
        store(subscription)
        return change(subscription, .paused)
    }

    /// `SUBSCRIPTION_RECOVERED` from a pause: billing resumes now with a new order. A pause resumes by
    /// itself at `autoResumeTime`; resuming earlier is the user's choice, so the clock moves only forward.
    mutating func resume(_ token: String) throws -> PlayChange {
        var subscription = try subscription(token)
        guard subscription.state == .paused else {
            throw SimulatorError(.invalidState, "only a paused subscription can resume; it is \(subscription.state.rawValue)")
        }
        let orderId = newPeriod(of: &subscription, start: now)
        store(subscription)
        return change(subscription, .recovered, orderId: orderId)
    }

    /// `SUBSCRIPTION_CANCELED`: renewals stop; access continues until `expiryTime`.
    mutating func cancel(_ token: String, source: PlayCancellationSource) throws -> PlayChange {
        var subscription = try renewable(token, "cancel")
        subscription.autoRenewEnabled = false
        subscription.state = .canceled
        subscription.cancellation = switch source {
        case .user: .user(cancelTime: now)
        case .system: .system
        case .developer: .developer
        }
        store(subscription)
        return change(subscription, .canceled)
    }

    /// `SUBSCRIPTION_RESTARTED`: the user restores a cancelled subscription before it expires; the token
    /// stays and the cancellation is cleared.
    mutating func restart(_ token: String) throws -> PlayChange {
        var subscription = try subscription(token)
        guard subscription.state == .canceled, subscription.expiryTime > now else {
            throw SimulatorError(.invalidState, "only a cancelled subscription that has not expired can be restored")
        }
        subscription.autoRenewEnabled = true
        subscription.cancellation = nil
        subscription.state = .active
        store(subscription)
        return change(subscription, .restarted)
    }

    /// `SUBSCRIPTION_EXPIRED`: a cancelled subscription reaches its expiry time, or account hold (or a grace
    /// period without hold) runs out; the clock moves there.
    mutating func expire(_ token: String) throws -> PlayChange {
        var subscription = try subscription(token)
        switch subscription.state {
        case .canceled:
            advanceClock(to: subscription.expiryTime)
        case .onHold:
            advanceClock(to: subscription.accountHoldEnds ?? now)
            subscription.cancellation = .system
        case .inGracePeriod:
            advanceClock(to: subscription.expiryTime)
            subscription.cancellation = .system
        default:
            throw SimulatorError(.invalidState, "only a cancelled subscription, or one in grace period or on hold, can expire; it is \(subscription.state.rawValue) (cancel it first)")
        }
        subscription.autoRenewEnabled = false
        subscription.state = .expired
        store(subscription)
        return change(subscription, .expired)
    }

    // MARK: Helpers

    /// An active subscription that will renew: what renewing, pausing, cancelling or a payment failure starts from.
    func renewable(_ token: String, _ what: String) throws -> SimulatedPlaySubscription {
        let subscription = try subscription(token)
        guard subscription.state == .active else {
            throw SimulatorError(.invalidState, "cannot \(what): the subscription is \(subscription.state.rawValue)")
        }
        return subscription
    }

    /// Charges the next period from `start` with a renewal order `{purchase order}..N` and makes the
    /// subscription active again.
    mutating func newPeriod(of subscription: inout SimulatedPlaySubscription, start: Int64) -> String {
        let renewal = app(of: subscription).periods(test: subscription.testPurchase).renewal.wholeMilliseconds
        let orderId = "\(subscription.orderIds[0])..\(subscription.renewalCount)"
        subscription.renewalCount += 1
        subscription.orderIds.append(orderId)
        subscription.expiryTime = start + renewal
        subscription.state = .active
        subscription.paymentDeclinedAt = nil
        subscription.accountHoldEnds = nil
        subscription.autoResumeTime = nil
        addOrder(orderId, for: subscription, from: start, to: start + renewal)
        return orderId
    }

    mutating func addOrder(_ orderId: String, for subscription: SimulatedPlaySubscription, from start: Int64, to end: Int64) {
        store(SimulatedPlayOrder(
            orderId: orderId, purchaseToken: subscription.purchaseToken, packageName: subscription.packageName,
            productId: subscription.productId, basePlanId: subscription.basePlanId, offerId: subscription.offerId,
            state: .processed, createTime: now, lastEventTime: now, total: subscription.price, tax: subscription.tax,
            currency: subscription.currency, regionCode: subscription.regionCode, servicePeriodStart: start,
            servicePeriodEnd: end, testPurchase: subscription.testPurchase))
    }

    /// The change `type` describes for `subscription`: one subscription notification.
    func change(_ subscription: SimulatedPlaySubscription, _ type: SubscriptionNotificationType, orderId: String? = nil)
        -> PlayChange
    {
        PlayChange(purchaseToken: subscription.purchaseToken, orderId: orderId,
                   notifications: [notification(type, subscription)])
    }

    func notification(_ type: SubscriptionNotificationType, _ subscription: SimulatedPlaySubscription) -> PlayNotification {
        PlayNotification(packageName: subscription.packageName, eventTime: now,
                         content: .subscription(type, purchaseToken: subscription.purchaseToken,
                                                subscriptionId: subscription.productId))
    }
}
