import Foundation
import StoreModel

/// Turns the App Store's verified answers about one lineage into the store-agnostic `StoreSnapshot` the
/// mirror applies. Pure: no I/O, no clock; the same answers give the same snapshot.
public enum AppleSnapshotTranslator {
    /// - Parameters:
    ///   - lineage: the `originalTransactionId` the snapshot is about.
    ///   - statuses: Get All Subscription Statuses; its entry for `lineage` gives the current state.
    ///   - history: verified transactions from Get Transaction History (possibly empty, possibly other
    ///     lineages' too — they are ignored), from which the charges come besides the latest transaction.
    ///   - fetchedAt: the answer's time when no signed payload carries a `signedDate`.
    public static func snapshot(lineage: String, statuses: SubscriptionStatuses, history: [Verified<TransactionPayload>],
                                source: SnapshotSource, fetchedAt: Date) throws(AppleSnapshotError) -> StoreSnapshot {
        guard let (group, entry) = statuses.entry(lineage: lineage) else {
            throw AppleSnapshotError(.lineageNotFound, "the statuses answer has no entry for originalTransactionId \(lineage)")
        }
        let latest = entry.transaction.payload
        let renewal = entry.renewalInfo?.payload
        guard let productID = latest.productId else { throw missing("productId", latest) }
        let environment = try environment(latest)
        let state = try state(entry.status)
        let asOf = [latest.signedDate, renewal?.signedDate].compactMap { $0 }.max() ?? fetchedAt
        let trialRunning = latest.offerDiscountType == "FREE_TRIAL" && state == .active
            && latest.expiresDate.map { $0 > asOf } == true
        return StoreSnapshot(
            store: .apple, lineage: lineage, environment: environment, productID: productID, basePlanID: nil,
            state: state, periodStart: latest.purchaseDate, expiresAt: latest.expiresDate,
            graceEndsAt: renewal?.gracePeriodExpiresDate, autoRenew: renewal?.autoRenewStatus == 1,
            inFreeTrial: trialRunning, ownership: try ownership(latest),
            accountToken: [latest.appAccountToken, renewal?.appAccountToken].compactMap { $0 }.first { !$0.isEmpty },
            charges: try charges(lineage: lineage, latest: latest, history: history.map(\.payload)),
            refundsReversible: true, asOf: asOf, source: source, raw: try raw(lineage: lineage, group: group, entry: entry))
    }

    /// Apple's `status` of a lineage as the store state.
    public static func state(_ status: Int) throws(AppleSnapshotError) -> StoreState {
        switch status {
        case 1: .active
        case 2: .expired
        case 3: .onHold  // billing retry: no access while Apple keeps trying to collect
        case 4: .grace
        case 5: .revoked
        default: throw AppleSnapshotError(.unknownStatus, "subscription status \(status) is not one of Apple's 1...5")
        }
    }

    // MARK: - Charges

    /// One charge per distinct paid transaction of the lineage. A transaction seen twice (history repeats
    /// changed ones; the statuses entry repeats the latest) counts once, in its most recently signed form.
    private static func charges(lineage: String, latest: TransactionPayload, history: [TransactionPayload])
        throws(AppleSnapshotError) -> [StoreCharge]
    {
        var byID: [String: TransactionPayload] = [:]
        for transaction in history + [latest] where transaction.originalTransactionId == lineage {
            guard let id = transaction.transactionId else { throw missing("transactionId", transaction) }
            if let seen = byID[id], (seen.signedDate ?? .distantPast) > (transaction.signedDate ?? .distantPast) { continue }
            byID[id] = transaction
        }
        let ordered = byID.values.sorted {
            ($0.purchaseDate ?? .distantPast, $0.transactionId ?? "") < ($1.purchaseDate ?? .distantPast, $1.transactionId ?? "")
        }
        var charges: [StoreCharge] = []
        for (index, transaction) in ordered.enumerated() {
            let upgradesPredecessor = index > 0 && ordered[index - 1].isUpgraded == true
            if let charge = try charge(transaction, upgradesPredecessor: upgradesPredecessor) { charges.append(charge) }
        }
        return charges
    }

    /// The charge `transaction` stands for, or nil when it books nothing: family-shared access (the family
    /// member never paid), free trials and zero prices, and transactions from before Apple reported prices.
    private static func charge(_ transaction: TransactionPayload, upgradesPredecessor: Bool)
        throws(AppleSnapshotError) -> StoreCharge?
    {
        guard try ownership(transaction) == .purchased, transaction.offerDiscountType != "FREE_TRIAL",
              let price = transaction.price, price != 0 else { return nil }
        guard let id = transaction.transactionId else { throw missing("transactionId", transaction) }
        guard price > 0 else { throw AppleSnapshotError(.invalidMoney, "transaction \(id) has a negative price \(price)") }
        guard let currency = transaction.currency else {
            throw AppleSnapshotError(.invalidMoney, "transaction \(id) has a price but no currency")
        }
        guard let productID = transaction.productId else { throw missing("productId", transaction) }
        guard let purchased = transaction.purchaseDate else { throw missing("purchaseDate", transaction) }
        let amount: Money
        do {
            amount = try Money.fromMilliunits(price, currency: currency)
        } catch {
            throw AppleSnapshotError(.invalidMoney, "transaction \(id): \(error)")
        }
        let reason = switch transaction.transactionReason {
        case "PURCHASE" where upgradesPredecessor: "upgrade"
        case nil, "PURCHASE": "purchase"
        case let other?: other.lowercased()
        }
        return StoreCharge(transactionID: id, productID: productID, amount: amount, chargedAt: purchased,
                           periodStart: purchased, periodEnd: transaction.expiresDate, reason: reason,
                           refund: try refund(of: transaction, id: id, amount: amount), seenAt: transaction.signedDate)
    }

    /// The refund Apple reports now; nil when the transaction carries no `revocationDate`, which is also how a
    /// reversed refund (`REFUND_REVERSED`) looks.
    private static func refund(of transaction: TransactionPayload, id: String, amount: Money)
        throws(AppleSnapshotError) -> StoreRefund?
    {
        guard let revoked = transaction.revocationDate else { return nil }
        let refunded: Money
        let kind: String
        switch transaction.revocationType {
        case nil, "REFUND_FULL":
            (refunded, kind) = (amount, "full")
        case "REFUND_PRORATED":
            guard let percentage = transaction.revocationPercentage else { throw missing("revocationPercentage", transaction) }
            do {
                refunded = try amount.share(percentMilli: Int64(percentage))
            } catch {
                throw AppleSnapshotError(.invalidMoney, "transaction \(id) prorated refund: \(error)")
            }
            kind = "prorated"
        case "FAMILY_REVOKE":
            // Access taken from a family member: no money goes back to anyone.
            (refunded, kind) = (Money(minorUnits: 0, currency: amount.currency), "family_revoke")
        case let other?:
            throw AppleSnapshotError(.unsupportedValue, "transaction \(id) has revocationType \(other), whose refund "
                                     + "amount is unknown")
        }
        return StoreRefund(amount: refunded, refundedAt: revoked, kind: kind,
                           reason: transaction.revocationReason.map(String.init))
    }

    // MARK: - Fields

    private static func ownership(_ transaction: TransactionPayload) throws(AppleSnapshotError) -> Ownership {
        switch transaction.inAppOwnershipType {
        case "PURCHASED": return .purchased
        case "FAMILY_SHARED": return .familyShared
        case let other:
            // Booking revenue hangs on this: never guess.
            throw AppleSnapshotError(.unsupportedValue, "transaction \(transaction.transactionId ?? "?") has "
                                     + "inAppOwnershipType \(other ?? "missing")")
        }
    }

    private static func environment(_ transaction: TransactionPayload) throws(AppleSnapshotError) -> StoreEnvironment {
        guard let raw = transaction.environment?.rawValue, let environment = StoreEnvironment(rawValue: raw) else {
            throw AppleSnapshotError(.unsupportedValue, "transaction \(transaction.transactionId ?? "?") has environment "
                                     + "\(transaction.environment?.rawValue ?? "missing")")
        }
        return environment
    }

    private static func missing(_ field: String, _ transaction: TransactionPayload) -> AppleSnapshotError {
        AppleSnapshotError(.missingField, "transaction \(transaction.transactionId ?? "without transactionId") of "
                           + "\(transaction.originalTransactionId ?? "no lineage") has no \(field)")
    }

    /// The statuses entry with its signed payloads decoded, as compact JSON: the signed JSON is inserted as
    /// Apple signed it, so on-call sees every field, including ones this version does not model.
    private static func raw(lineage: String, group: String?, entry: SubscriptionStatuses.LastTransaction)
        throws(AppleSnapshotError) -> String
    {
        func quoted(_ text: String) throws(AppleSnapshotError) -> String {
            do {
                return String(decoding: try JSONEncoder().encode(text), as: UTF8.self)
            } catch {
                throw AppleSnapshotError(.unsupportedValue, "\(text.prefix(40).debugDescription) cannot be JSON-encoded")
            }
        }
        var fields = ["\"originalTransactionId\":\(try quoted(lineage))"]
        if let renewal = entry.renewalInfo { fields.append("\"renewalInfo\":" + String(decoding: renewal.json, as: UTF8.self)) }
        fields.append("\"status\":\(entry.status)")
        if let group { fields.append("\"subscriptionGroupIdentifier\":\(try quoted(group))") }
        fields.append("\"transactionInfo\":" + String(decoding: entry.transaction.json, as: UTF8.self))
        return "{" + fields.joined(separator: ",") + "}"
    }
}
