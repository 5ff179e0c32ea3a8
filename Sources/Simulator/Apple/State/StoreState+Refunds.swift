import Foundation

/// Refunds and revocations, and the refund requests that precede them.
extension StoreState {
    /// `REFUND`: `transactionId` (default: the current period's) is refunded now, fully or — with `percentage`
    /// in milliunits (1…99999) — prorated. Refunding the current period revokes access and turns auto-renew off.
    mutating func refund(_ originalTransactionId: String, transactionId: String?, percentage: Int?,
                         reason: Int) throws -> ScenarioEvent {
        var subscription = try subscription(originalTransactionId)
        var transaction = try transaction(transactionId, of: subscription)
        try Self.checkRefundable(transaction, "refund")
        guard transaction.revocation == nil else {
            throw SimulatorError(.invalidState, "transaction \(transaction.transactionId) is already revoked")
        }
        if let percentage, !(1...99_999).contains(percentage) {
            throw SimulatorError(.invalidArgument, "a prorated refund's percentage is 1...99999 milliunits (omit it for a full refund), got \(percentage)")
        }
        guard reason == 0 || reason == 1 else {
            throw SimulatorError(.invalidArgument, "revocationReason is 0 (other) or 1 (issue with the app), got \(reason)")
        }
        transaction.revocation = .init(date: now, kind: percentage == nil ? .refundFull : .refundProrated,
                                       percentage: percentage, reason: reason)
        store(transaction)
        if transaction.transactionId == subscription.latestTransactionId {
            subscription.beforeRevocation = .init(status: subscription.status,
                                                  autoRenewStatus: subscription.renewalInfo.autoRenewStatus)
            subscription.renewalInfo.autoRenewStatus = false
            subscription.status = .revoked
            store(subscription)
        }
        return event("REFUND", nil, subscription, transaction: transaction)
    }

    /// `REFUND_DECLINED`: nothing changes.
    mutating func declineRefund(_ originalTransactionId: String, transactionId: String?) throws -> ScenarioEvent {
        let subscription = try subscription(originalTransactionId)
        let transaction = try transaction(transactionId, of: subscription)
        try Self.checkRefundable(transaction, "declined refund")
        return event("REFUND_DECLINED", nil, subscription, transaction: transaction)
    }

    /// `REFUND_REVERSED`: a refund (default: the latest refunded transaction) is undone. If it was the current
    /// period, the status and auto-renew setting go back to what they were before the refund, as far as the
    /// clock allows: access returns until the period's unchanged expiry, a grace period until its end.
    mutating func reverseRefund(_ originalTransactionId: String, transactionId: String?) throws -> ScenarioEvent {
        var subscription = try subscription(originalTransactionId)
        let refunded = subscription.transactionIds.last { id in
            transactions[id].map { $0.revocation?.isRefund == true && !$0.isUpgraded } == true
        }
        guard let id = transactionId ?? refunded else {
            throw SimulatorError(.invalidState, "subscription \(originalTransactionId) has no refunded transaction")
        }
        var transaction = try transaction(id, of: subscription)
        guard transaction.revocation?.isRefund == true, !transaction.isUpgraded else {
            throw SimulatorError(.invalidState, "transaction \(id) was not refunded")
        }
        transaction.revocation = nil
        store(transaction)
        if id == subscription.latestTransactionId, subscription.status == .revoked, let saved = subscription.beforeRevocation {
            subscription.status = status(restoring: saved.status, of: subscription, period: transaction)
            subscription.renewalInfo.autoRenewStatus = saved.autoRenewStatus
            subscription.beforeRevocation = nil
            store(subscription)
        }
        return event("REFUND_REVERSED", nil, subscription, transaction: transaction)
    }

    /// `CONSUMPTION_REQUEST`: the customer asked for a refund of `transactionId` (default: the current
    /// period's); Apple asks the developer for consumption data.
    mutating func requestConsumption(_ originalTransactionId: String, transactionId: String?,
                                     reason: ConsumptionRequestReason) throws -> ScenarioEvent {
        let subscription = try subscription(originalTransactionId)
        let transaction = try transaction(transactionId, of: subscription)
        try Self.checkRefundable(transaction, "consumption request")
        return event("CONSUMPTION_REQUEST", nil, subscription, transaction: transaction, consumptionRequestReason: reason)
    }

    /// `REVOKE`: a family member loses a family-shared subscription (the purchaser stopped sharing or left).
    mutating func revokeFamilySharing(_ originalTransactionId: String) throws -> ScenarioEvent {
        var subscription = try subscription(originalTransactionId)
        var transaction = latestTransaction(of: subscription)
        guard transaction.inAppOwnershipType == .familyShared else {
            throw SimulatorError(.invalidState, "subscription \(originalTransactionId) is not family-shared")
        }
        guard subscription.status != .revoked, subscription.status != .expired else {
            throw SimulatorError(.invalidState, "the subscription is already \(subscription.status)")
        }
        transaction.revocation = .init(date: now, kind: .familyRevoke, percentage: nil, reason: nil)
        store(transaction)
        subscription.renewalInfo.autoRenewStatus = false
        subscription.status = .revoked
        store(subscription)
        return event("REVOKE", nil, subscription, transaction: transaction)
    }

    /// Only the purchaser can ask for a refund; a family member's access ends with the purchaser's refund, as
    /// `REVOKE` (`FAMILY_REVOKE`), so a refund story about a family-shared transaction would be one Apple never tells.
    private static func checkRefundable(_ transaction: SimulatedTransaction, _ what: String) throws {
        guard transaction.inAppOwnershipType != .familyShared else {
            throw SimulatorError(.invalidState, "no \(what) for family-shared transaction \(transaction.transactionId): a family "
                                 + "member cannot ask for a refund; when the purchaser is refunded, use revoke-family-sharing")
        }
    }

    /// The status a reversed refund returns to: the one the refund interrupted while the clock allows it. A
    /// period that has ended meanwhile leaves the subscription expired (it was not renewed while revoked); a
    /// grace period that has ended leaves it in billing retry, which in the simulator ends only by a command.
    private func status(restoring saved: SubscriptionStatus, of subscription: SimulatedSubscription,
                        period: SimulatedTransaction) -> SubscriptionStatus {
        switch saved {
        case .active:
            period.expiresDate > now ? .active : .expired
        case .gracePeriod:
            subscription.renewalInfo.gracePeriodExpiresDate.map { $0 > now } == true ? .gracePeriod : .billingRetry
        case .expired, .billingRetry, .revoked:
            saved
        }
    }
}

extension SimulatedTransaction.Revocation {
    var isRefund: Bool { kind == .refundFull || kind == .refundProrated }
}
