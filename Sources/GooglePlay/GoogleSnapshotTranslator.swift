import Foundation
import StoreModel

/// What Google's answers about a purchase amount to for the mirror.
public enum GoogleSnapshotResult: Sendable {
    case snapshot(StoreSnapshot)
    /// `SUBSCRIPTION_STATE_PENDING` (awaiting payment) or `…_PENDING_PURCHASE_CANCELED`: no money moved and no
    /// access granted, so there is nothing to mirror yet. The job completes; a later notification brings the state.
    case pending(subscriptionState: String)

    public var snapshot: StoreSnapshot? {
        if case .snapshot(let snapshot) = self { snapshot } else { nil }
    }
}

/// Turns Google's answers about one purchase token — the `SubscriptionPurchaseV2`, the orders of its line items,
/// and any voided orders — into the store-agnostic `StoreSnapshot` the mirror applies. Pure: no I/O, no clock;
/// the same answers give the same snapshot.
public enum GoogleSnapshotTranslator {
    public static let pendingStates: Set<String> = ["SUBSCRIPTION_STATE_PENDING", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"]

    /// - Parameters:
    ///   - lineage: the first purchase token of the `linkedPurchaseToken` chain (the caller walked it).
    ///   - purchaseToken: the token `subscription` was fetched for.
    ///   - orders: `orders.get` answers for the line items' `latestSuccessfulOrderId`s (those not booked yet, or
    ///     all); each becomes one charge. Orders of `lineage`, `replacedTokens` or `knownTokens` are accepted too.
    ///   - voided: orders Google reports voided (a `voidedPurchaseNotification`, the voided purchases list); their
    ///     charges carry the refund.
    ///   - replacedTokens: the tokens this purchase replaced, oldest first, as the caller walked them.
    ///   - knownTokens: every token the mirror has recorded for `lineage`: a voided order of a token in the
    ///     middle of a long chain (neither the first nor the one just replaced) still belongs to the lineage.
    ///   - fetchedAt: when `subscription` was fetched; Google signs no date, so this is the snapshot's as-of time
    ///     and decides whether a cancelled subscription's access has run out.
    public static func snapshot(lineage: String, purchaseToken: String, subscription: SubscriptionPurchaseV2,
                                orders: [GooglePlayOrder], voided: [VoidedOrder] = [], replacedTokens: [String] = [],
                                knownTokens: [String] = [], source: SnapshotSource,
                                fetchedAt: Date) throws(GoogleSnapshotError) -> GoogleSnapshotResult {
        guard let stateName = subscription.subscriptionState else { throw missing("subscriptionState") }
        if pendingStates.contains(stateName) { return .pending(subscriptionState: stateName) }
        guard let item = mainItem(subscription.lineItems) else { throw missing("lineItems") }
        guard let productID = item.productId, !productID.isEmpty else { throw missing("lineItems[].productId") }
        let expiresAt = subscription.lineItems.compactMap(\.expiryTime).max()
        let autoRenewEnabled = subscription.lineItems.contains { $0.autoRenewingPlan?.autoRenewEnabled == true }
        let (state, autoRenew) = try state(stateName, autoRenewEnabled: autoRenewEnabled, expiresAt: expiresAt, asOf: fetchedAt)
        let environment: StoreEnvironment = subscription.isTestPurchase ? .sandbox : .production
        let allowedTokens = Set([purchaseToken, lineage] + replacedTokens + knownTokens)
        let current = orders.first { $0.orderId != nil && $0.orderId == item.latestSuccessfulOrderId }
        return .snapshot(StoreSnapshot(
            store: .google, lineage: lineage, environment: environment, productID: productID,
            basePlanID: item.offerDetails?.basePlanId, state: state,
            periodStart: current?.lineItems?.first?.subscriptionDetails?.servicePeriodStartTime ?? current?.createTime,
            expiresAt: expiresAt, graceEndsAt: state == .grace ? expiresAt : nil, autoRenew: autoRenew,
            inFreeTrial: state == .active && item.offerPhase == "freeTrial", ownership: .purchased,
            accountToken: accountToken(subscription),
            charges: try charges(orders, subscription: subscription, allowedTokens: allowedTokens, voided: voided),
            purchaseToken: purchaseToken, replacedTokens: replacedTokens,
            // Test purchases too: Google refunds and revokes an unacknowledged one like any other, and a Sandbox
            // connection mirrors them normally. A Production connection skips them before writing anything.
            needsAcknowledgement: subscription.acknowledgementState == "ACKNOWLEDGEMENT_STATE_PENDING",
            asOf: fetchedAt, source: source, raw: String(decoding: subscription.json, as: UTF8.self)))
    }

    /// The store state of a non-pending `subscriptionState`, and whether the subscription renews.
    private static func state(_ name: String, autoRenewEnabled: Bool, expiresAt: Date?, asOf: Date)
        throws(GoogleSnapshotError) -> (StoreState, Bool)
    {
        switch name {
        case "SUBSCRIPTION_STATE_ACTIVE": return (.active, autoRenewEnabled)
        case "SUBSCRIPTION_STATE_IN_GRACE_PERIOD": return (.grace, autoRenewEnabled)
        case "SUBSCRIPTION_STATE_ON_HOLD": return (.onHold, autoRenewEnabled)
        case "SUBSCRIPTION_STATE_PAUSED": return (.paused, autoRenewEnabled)
        case "SUBSCRIPTION_STATE_CANCELED":
            // Cancelled but paid up: access continues until the items expire, and nothing renews.
            guard let expiresAt else { throw missing("lineItems[].expiryTime of a cancelled subscription") }
            return (expiresAt > asOf ? .active : .expired, false)
        case "SUBSCRIPTION_STATE_EXPIRED": return (.expired, false)
        default:
            throw GoogleSnapshotError(.unknownState, "subscriptionState \(name.prefix(80).debugDescription) is not one this "
                                      + "version mirrors")
        }
    }

    /// The line item that decides product and base plan: the one that runs longest (the first of equals), so an
    /// add-on that lapsed earlier does not stand for the subscription.
    private static func mainItem(_ items: [SubscriptionPurchaseV2.LineItem]) -> SubscriptionPurchaseV2.LineItem? {
        items.reduce(nil) { best, item in
            guard let best else { return item }
            return (item.expiryTime ?? .distantPast) > (best.expiryTime ?? .distantPast) ? item : best
        }
    }

    /// `obfuscatedExternalAccountId`; for a resubscription made in the Play subscription center (outside the app,
    /// so without one), the one of the expired purchase it resubscribes.
    private static func accountToken(_ subscription: SubscriptionPurchaseV2) -> String? {
        [subscription.externalAccountIdentifiers?.obfuscatedExternalAccountId,
         subscription.outOfAppPurchaseContext?.expiredExternalAccountIdentifiers?.obfuscatedExternalAccountId]
            .compactMap { $0 }.first { !$0.isEmpty }
    }

    // MARK: - Charges

    /// One charge per distinct order that took money, in charge order.
    private static func charges(_ orders: [GooglePlayOrder], subscription: SubscriptionPurchaseV2, allowedTokens: Set<String>,
                                voided: [VoidedOrder]) throws(GoogleSnapshotError) -> [StoreCharge] {
        let voidedByID = voidedByOrder(voided)
        var seen = Set<String>()
        var charges: [StoreCharge] = []
        for order in orders {
            guard let id = order.orderId, !id.isEmpty else { throw missing("orderId of an order") }
            guard seen.insert(id).inserted else { continue }
            if let token = order.purchaseToken, !allowedTokens.contains(token) {
                throw GoogleSnapshotError(.orderMismatch, "order \(id) belongs to another purchase token than this lineage's")
            }
            if let charge = try charge(order, id: id, subscription: subscription, voided: voidedByID[id]) {
                charges.append(charge)
            }
        }
        return charges.sorted { ($0.chargedAt, $0.transactionID) < ($1.chargedAt, $1.transactionID) }
    }

    /// The voided record that counts for each order. Refunds only grow: a void of the whole order (the remainder
    /// after a partial one comes as one) beats any partial one, and of two alike the latest counts.
    static func voidedByOrder(_ voided: [VoidedOrder]) -> [String: VoidedOrder] {
        var voidedByID: [String: VoidedOrder] = [:]
        for record in voided {
            func rank(_ voided: VoidedOrder) -> (Int, Date) { (voided.isPartial ? 0 : 1, voided.voidedAt) }
            if let seen = voidedByID[record.orderID], rank(seen) >= rank(record) { continue }
            voidedByID[record.orderID] = record
        }
        return voidedByID
    }

    /// What `order` charged, or nil when it took no money: pending or cancelled before processing, or a zero
    /// total (a free trial or free proration period).
    static func paidTotal(of order: GooglePlayOrder, id: String) throws(GoogleSnapshotError) -> Money? {
        guard let state = order.state else { throw missing("state of order \(id)") }
        switch state {
        case "PENDING", "CANCELED": return nil
        case "PROCESSED", "PENDING_REFUND", "PARTIALLY_REFUNDED", "REFUNDED": break
        default:
            throw GoogleSnapshotError(.unsupportedValue, "order \(id) has state \(state.prefix(60).debugDescription), whose "
                                      + "charge is unknown")
        }
        guard let total = order.total else { throw missing("total of order \(id)") }
        let amount = try money(total, "total of order \(id)")
        guard amount.minorUnits >= 0 else {
            throw GoogleSnapshotError(.invalidMoney, "order \(id) has a negative total \(amount)")
        }
        return amount.minorUnits > 0 ? amount : nil
    }

    /// The charge `order` stands for, or nil when it took no money (`paidTotal`).
    private static func charge(_ order: GooglePlayOrder, id: String, subscription: SubscriptionPurchaseV2,
                               voided: VoidedOrder?) throws(GoogleSnapshotError) -> StoreCharge? {
        guard let amount = try paidTotal(of: order, id: id) else { return nil }
        guard let createdAt = order.createTime else { throw missing("createTime of order \(id)") }
        let line = order.lineItems?.first
        let owner = subscription.lineItems.first { $0.latestSuccessfulOrderId == id }
        guard let productID = line?.productId ?? owner?.productId, !productID.isEmpty else {
            throw missing("lineItems[].productId of order \(id)")
        }
        let period = line?.subscriptionDetails
        // The first order's service period starts when the subscription did; a renewal's starts a period later.
        let periodStart = period?.servicePeriodStartTime ?? createdAt
        let renews = subscription.startTime.map { periodStart > $0.addingTimeInterval(60) } ?? false
        return StoreCharge(transactionID: id, productID: productID, amount: amount, chargedAt: createdAt,
                           periodStart: period?.servicePeriodStartTime, periodEnd: period?.servicePeriodEndTime,
                           reason: renews ? "renewal" : "purchase",
                           refund: try refund(of: order, id: id, total: amount, voided: voided))
    }

    /// The refund of `order` as Google reports it now: all that was refunded of it so far, as refunds only grow.
    /// The order's own word decides first: a `refundEvent` ("fully refunded") or the `REFUNDED` state refunds its
    /// total, however its details split it (after partial refunds, the full refund's own amount may be just the
    /// rest); else its processed partial refunds add up — a prorated revoke is voided as a whole order yet
    /// refunds less. Only an order that shows no refund yet (its history lagging) takes a voided record of the
    /// whole order as its total. Too little is safe, as a later answer grows the refund; too much never shrinks.
    /// `nil` when nothing says the order was refunded.
    static func refund(of order: GooglePlayOrder, id: String, total: Money, voided: VoidedOrder?)
        throws(GoogleSnapshotError) -> StoreRefund?
    {
        if let event = order.orderHistory?.refundEvent {
            if let details = event.refundDetails?.total {
                _ = try refunded(details, of: total, "refundEvent of order \(id)")
            }
            guard let at = event.eventTime ?? voided?.voidedAt ?? order.lastEventTime else {
                throw missing("orderHistory.refundEvent.eventTime of order \(id)")
            }
            return StoreRefund(amount: total, refundedAt: at, kind: "full", reason: event.refundReason ?? voided?.reason)
        }
        let partial = try partialRefunds(of: order, id: id, total: total)
        if order.state == "REFUNDED" {
            guard let at = [partial?.at, order.lastEventTime].compactMap({ $0 }).max() else {
                throw missing("lastEventTime of refunded order \(id)")
            }
            return StoreRefund(amount: total, refundedAt: at, kind: "full", reason: voided?.reason)
        }
        if let partial {
            guard let at = partial.at ?? voided?.voidedAt ?? order.lastEventTime else {
                throw missing("processTime of the partial refunds of order \(id)")
            }
            return StoreRefund(amount: partial.amount, refundedAt: at, kind: partial.amount == total ? "full" : "partial",
                               reason: voided?.reason)
        }
        if let voided, !voided.isPartial {
            return StoreRefund(amount: total, refundedAt: voided.voidedAt, kind: "full", reason: voided.reason)
        }
        if voided != nil {
            throw GoogleSnapshotError(.unsupportedValue, "order \(id) was voided in part (refundType 2 or voidedQuantity) "
                                      + "but shows no processed partial refund to take the amount from")
        }
        return nil
    }

    /// The sum of the order's processed partial refunds and when the last was processed; `nil` without any.
    private static func partialRefunds(of order: GooglePlayOrder, id: String, total: Money)
        throws(GoogleSnapshotError) -> (amount: Money, at: Date?)?
    {
        let processed = (order.orderHistory?.partialRefundEvents ?? []).filter { $0.state == "PROCESSED_SUCCESSFULLY" }
        guard !processed.isEmpty else { return nil }
        var sum: Int64 = 0
        for event in processed {
            guard let details = event.refundDetails?.total else {
                throw missing("refundDetails.total of a partial refund of order \(id)")
            }
            let part = try refunded(details, of: total, "partial refund of order \(id)")
            let (next, overflow) = sum.addingReportingOverflow(part.minorUnits)
            guard !overflow else { throw GoogleSnapshotError(.invalidMoney, "partial refunds of order \(id) overflow") }
            sum = next
        }
        let amount = Money(minorUnits: sum, currency: total.currency)
        guard sum <= total.minorUnits else {
            throw GoogleSnapshotError(.invalidMoney, "partial refunds of order \(id) add up to \(amount), more than its "
                                      + "total \(total)")
        }
        return (amount, processed.compactMap { $0.processTime ?? $0.createTime }.max())
    }

    /// A refunded amount of a charge of `total`: same currency, not negative, not more than the charge.
    private static func refunded(_ value: GooglePlayMoney, of total: Money, _ what: String) throws(GoogleSnapshotError) -> Money {
        let amount = try money(value, what)
        guard amount.currency == total.currency, amount.minorUnits >= 0, amount.minorUnits <= total.minorUnits else {
            throw GoogleSnapshotError(.invalidMoney, "\(what) is \(amount), not between nothing and the charge of \(total)")
        }
        return amount
    }

    private static func money(_ value: GooglePlayMoney, _ what: String) throws(GoogleSnapshotError) -> Money {
        do {
            return try value.money()
        } catch {
            throw GoogleSnapshotError(.invalidMoney, "\(what): \(error)")
        }
    }

    static func missing(_ field: String) -> GoogleSnapshotError {
        GoogleSnapshotError(.missingField, "the answer has no \(field)")
    }
}
