import Foundation

/// What the customer changes about renewal: auto-renew on or off, upgrades, downgrades.
extension StoreState {
    /// `DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED`: access continues to the end of the period.
    mutating func cancel(_ originalTransactionId: String) throws -> ScenarioEvent {
        var subscription = try live(originalTransactionId, "turn auto-renew off")
        guard subscription.renewalInfo.autoRenewStatus else {
            throw SimulatorError(.invalidState, "auto-renew is already off")
        }
        subscription.renewalInfo.autoRenewStatus = false
        store(subscription)
        return event("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", subscription)
    }

    /// `DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED`.
    mutating func resume(_ originalTransactionId: String) throws -> ScenarioEvent {
        var subscription = try live(originalTransactionId, "turn auto-renew on")
        guard !subscription.renewalInfo.autoRenewStatus else {
            throw SimulatorError(.invalidState, "auto-renew is already on")
        }
        subscription.renewalInfo.autoRenewStatus = true
        store(subscription)
        return event("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", subscription)
    }

    /// `DID_CHANGE_RENEWAL_PREF/UPGRADE`: takes effect now. A new period of `productId` starts; the current
    /// transaction is marked `isUpgraded` and its unused share refunded (`REFUND_PRORATED`, no separate
    /// `REFUND` notification — Apple sends one notification per event).
    mutating func upgrade(_ originalTransactionId: String, to productId: String, price: Int64) throws -> ScenarioEvent {
        var subscription = try subscription(originalTransactionId)
        guard subscription.status == .active else {
            throw SimulatorError(.invalidState, "only an active subscription can be upgraded; it is \(subscription.status)")
        }
        try Self.checkProduct(productId)
        try Self.checkPrice(price, currency: subscription.renewalInfo.currency)
        var old = latestTransaction(of: subscription)
        guard productId != old.productId else {
            throw SimulatorError(.invalidState, "the subscription is already on \(productId)")
        }
        old.isUpgraded = true
        old.revocation = .init(date: now, kind: .refundProrated, percentage: Self.unusedShare(of: old, at: now), reason: nil)
        store(old)
        let transaction = newPeriod(of: &subscription, productId: productId, price: price, start: now, reason: .purchase)
        subscription.renewalInfo.autoRenewStatus = true
        subscription.renewalInfo.autoRenewProductId = productId
        subscription.renewalInfo.renewalPrice = price
        store(subscription)
        return event("DID_CHANGE_RENEWAL_PREF", "UPGRADE", subscription, transaction: transaction)
    }

    /// `DID_CHANGE_RENEWAL_PREF/DOWNGRADE`: only the renewal preference changes; the next renewal buys
    /// `productId` at `price`. Choosing the current product again cancels a pending downgrade
    /// (`DID_CHANGE_RENEWAL_PREF` without a subtype).
    mutating func downgrade(_ originalTransactionId: String, to productId: String, price: Int64) throws -> ScenarioEvent {
        var subscription = try live(originalTransactionId, "change the renewal product")
        try Self.checkProduct(productId)
        try Self.checkPrice(price, currency: subscription.renewalInfo.currency)
        guard productId != subscription.renewalInfo.autoRenewProductId else {
            throw SimulatorError(.invalidState, "the subscription already renews to \(productId)")
        }
        subscription.renewalInfo.autoRenewProductId = productId
        subscription.renewalInfo.renewalPrice = price
        store(subscription)
        let reverted = productId == subscription.renewalInfo.productId
        return event("DID_CHANGE_RENEWAL_PREF", reverted ? nil : "DOWNGRADE", subscription)
    }

    /// A subscription that has not ended (active, or in billing retry).
    private func live(_ originalTransactionId: String, _ what: String) throws -> SimulatedSubscription {
        let subscription = try subscription(originalTransactionId)
        guard subscription.status != .expired, subscription.status != .revoked else {
            throw SimulatorError(.invalidState, "cannot \(what): the subscription is \(subscription.status)")
        }
        return subscription
    }

    /// The part of `transaction`'s period still unused at `date`, in milliunits of a percent (100000 = 100 %).
    static func unusedShare(of transaction: SimulatedTransaction, at date: Date) -> Int {
        let total = transaction.expiresDate.milliseconds - transaction.purchaseDate.milliseconds
        let unused = min(max(transaction.expiresDate.milliseconds - date.milliseconds, 0), total)
        guard total > 0 else { return 0 }
        return Int(unused * 100_000 / total)
    }
}
