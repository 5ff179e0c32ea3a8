/// Plan changes, refunds and tokens Google has forgotten.
extension PlayState {
    /// What an upgrade or downgrade buys.
    struct Replacement: Sendable {
        var productId: String
        var basePlanId: String
        var offerId: String?
        var price: Int64
        var tax: Int64 = 0
        /// `CHARGE_PRORATED_PRICE` for upgrades, `WITHOUT_PRORATION` for downgrades.
        var mode: String
    }

    /// `SUBSCRIPTION_PURCHASED` for a new token replacing `token` at once (an upgrade or downgrade): the new
    /// token's `linkedPurchaseToken` points back, it has its own purchase order and a period starting now, and
    /// it must be acknowledged again. The old token ends now (`replacementCancellation`) and is never renewed.
    mutating func replace(_ token: String, with replacement: Replacement) throws -> PlayChange {
        var old = try subscription(token)
        guard old.state == .active || old.state == .canceled || old.state == .inGracePeriod else {
            throw SimulatorError(.invalidState, "only a subscription with access can change plan; it is \(old.state.rawValue)")
        }
        try Self.checkIdentifier(replacement.productId, "productId")
        try Self.checkIdentifier(replacement.basePlanId, "basePlanId", maxLength: 63)
        if let offerId = replacement.offerId { try Self.checkIdentifier(offerId, "offerId", maxLength: 63) }
        try Self.checkPrice(replacement.price, tax: replacement.tax, currency: old.currency)
        let newToken = Self.newPurchaseToken()
        let orderId = newOrderID()
        let expiry = now + app(of: old).periods(test: old.testPurchase).renewal.wholeMilliseconds
        let new = SimulatedPlaySubscription(
            purchaseToken: newToken, packageName: old.packageName, productId: replacement.productId,
            basePlanId: replacement.basePlanId, offerId: replacement.offerId, startTime: now, regionCode: old.regionCode,
            state: .active, expiryTime: expiry, autoRenewEnabled: true, price: replacement.price,
            tax: old.testPurchase ? 0 : replacement.tax, currency: old.currency, linkedPurchaseToken: token, replacedBy: nil,
            obfuscatedAccountId: old.obfuscatedAccountId, obfuscatedProfileId: old.obfuscatedProfileId,
            testPurchase: old.testPurchase, acknowledged: false, orderIds: [orderId], renewalCount: 0, autoResumeTime: nil,
            cancellation: nil, paymentDeclinedAt: nil, accountHoldEnds: nil,
            replacement: PlayItemReplacement(productId: old.productId, basePlanId: old.basePlanId, mode: replacement.mode),
            noLongerAvailable: false)
        store(new)
        addOrder(orderId, for: new, from: now, to: expiry)
        old.state = .expired
        old.autoRenewEnabled = false
        old.expiryTime = min(old.expiryTime, now)
        old.cancellation = .replacement
        old.replacedBy = newToken
        store(old)
        return change(new, .purchased, orderId: orderId)
    }

    /// What a refund covers and how Google records it.
    struct Refund: Sendable {
        /// Default: the token's latest successful order.
        var orderId: String?
        /// Whether access ends now (`SUBSCRIPTION_REVOKED` follows the voided-purchase notification).
        var revoke = true
        /// Minor units to refund when less than what remains: a partial refund (`refundType` 2).
        var partialAmount: Int64?
        var source = VoidedSource.developer
        var reason = VoidedReason.other
    }

    /// A refund of one order: `voidedPurchaseNotification` (full, or partial with `partialAmount`), the order
    /// `REFUNDED` or `PARTIALLY_REFUNDED` with the refund in its history, a Voided Purchases API entry, and with
    /// `revoke` the subscription expired now and `SUBSCRIPTION_REVOKED`. A token Google no longer answers for
    /// (`noLongerAvailable`) still has its orders refunded, without revoking: Google refunds and charges back
    /// orders long after their subscription expired, and `orders.get` keeps answering for them.
    mutating func refund(_ token: String, _ refund: Refund) throws -> PlayChange {
        var subscription = try subscription(token)
        guard let orderId = refund.orderId ?? subscription.latestSuccessfulOrderId, var order = orders[orderId],
              order.purchaseToken == token else {
            throw SimulatorError(.notFound, "the token has no order \(refund.orderId ?? "")")
        }
        let remaining = order.refundableAmount
        guard order.state != .refunded, remaining > 0 else {
            throw SimulatorError(.invalidState, "order \(orderId) is already refunded")
        }
        let amount = refund.partialAmount ?? remaining
        guard (1...remaining).contains(amount) else {
            throw SimulatorError(.invalidArgument, "a partial refund of order \(orderId) is 1...\(remaining) minor units")
        }
        guard !refund.revoke || subscription.state != .expired else {
            throw SimulatorError(.invalidState, "an expired subscription cannot be revoked; refund it without revoking")
        }
        let full = amount == remaining
        let tax = full ? order.tax - order.refunds.reduce(0) { $0 + $1.tax } : order.tax * amount / max(order.total, 1)
        order.refunds.append(.init(time: now, total: amount, tax: tax, partial: !full))
        order.state = full ? .refunded : .partiallyRefunded
        order.lastEventTime = now
        store(order)
        let refundType = full ? 1 : 2
        record(VoidedPurchaseRecord(purchaseToken: token, orderId: orderId, packageName: subscription.packageName,
                                    purchaseTime: order.createTime, voidedTime: now, source: refund.source,
                                    reason: refund.reason, refundType: refundType))
        var notifications = [PlayNotification(packageName: subscription.packageName, eventTime: now,
                                              content: .voided(purchaseToken: token, orderId: orderId, refundType: refundType))]
        if refund.revoke {
            subscription.state = .expired
            subscription.autoRenewEnabled = false
            subscription.expiryTime = min(subscription.expiryTime, now)
            subscription.cancellation = .developer
            store(subscription)
            notifications.append(notification(.revoked, subscription))
        }
        return PlayChange(purchaseToken: token, orderId: orderId, notifications: notifications)
    }

    /// `SUBSCRIPTION_EXPIRED` for a token Google no longer answers for: from now on the API says 410, as it
    /// does once a subscription has been expired for more than 60 days.
    mutating func expireLongAgo(_ token: String) throws -> PlayChange {
        var subscription = try subscription(token)
        guard !subscription.noLongerAvailable else { throw SimulatorError(.invalidState, "the token is already gone") }
        if subscription.state != .expired {
            subscription.state = .expired
            subscription.autoRenewEnabled = false
            subscription.expiryTime = min(subscription.expiryTime, now)
            subscription.cancellation = subscription.cancellation ?? .system
        }
        subscription.noLongerAvailable = true
        store(subscription)
        return change(subscription, .expired)
    }
}
