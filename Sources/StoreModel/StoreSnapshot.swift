import Foundation

/// One store charge: becomes exactly one invoice and one payment, whatever number of times it is seen.
public struct StoreCharge: Sendable, Hashable {
    /// Apple `transactionId`, Google order id: unique per store.
    public let transactionID: String
    public let productID: String
    public let amount: Money
    public let chargedAt: Date
    /// Period the charge pays for, when the store says.
    public let periodStart: Date?
    public let periodEnd: Date?
    /// `purchase`, `renewal`, `upgrade`…, for the invoice's description.
    public let reason: String
    /// The refund the store reports for this charge now; `nil` when it shows none — where refunds are
    /// reversible (`StoreSnapshot.refundsReversible`), on a charge whose earlier refund was reversed.
    public let refund: StoreRefund?
    /// When the store signed this copy of the charge, where it says (Apple's `signedDate`). A copy signed
    /// before a refund cannot show it, so only a copy signed at or after the refund and showing none reverses it —
    /// whatever the time of the answer it came in, whose parts (status, history pages) are read apart.
    public let seenAt: Date?

    public init(transactionID: String, productID: String, amount: Money, chargedAt: Date, periodStart: Date?,
                periodEnd: Date?, reason: String, refund: StoreRefund?, seenAt: Date? = nil) {
        self.transactionID = transactionID
        self.productID = productID
        self.amount = amount
        self.chargedAt = chargedAt
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.reason = reason
        self.refund = refund
        self.seenAt = seenAt
    }
}

/// A refund of one charge, full or partial.
public struct StoreRefund: Sendable, Hashable {
    /// All the store has refunded of the charge so far, not the last refund alone: a charge refunded in parts
    /// has one refund, which only grows (a partial refund followed by the rest is a full one).
    public let amount: Money
    /// When the refund last grew.
    public let refundedAt: Date
    /// `full`, `prorated`, `partial`, `family_revoke`…
    public let kind: String
    /// The store's reason, verbatim, when it gives one.
    public let reason: String?

    public init(amount: Money, refundedAt: Date, kind: String, reason: String?) {
        self.amount = amount
        self.refundedAt = refundedAt
        self.kind = kind
        self.reason = reason
    }
}

/// Where a snapshot came from, for the purchase's timeline.
public struct SnapshotSource: Sendable, Hashable {
    /// `notification`, `resync`, `register`…
    public let kind: String
    /// The notification's id (Apple `notificationUUID`, Pub/Sub `messageId`) or the job's.
    public let reference: String?
    /// What happened, in the store's words (`DID_RENEW/BILLING_RECOVERY`, `SUBSCRIPTION_RENEWED`).
    public let event: String

    public init(kind: String, reference: String?, event: String) {
        self.kind = kind
        self.reference = reference
        self.event = event
    }
}

/// The authoritative state of one purchase lineage as a store reported it at `asOf`: what `AppStore` and
/// `GooglePlay` translate their verified answers into, and the only thing `Mirror` applies. It carries no
/// SubscriptionFlow decisions (customer, plan price, status); those follow from it in `Mirror`.
public struct StoreSnapshot: Sendable {
    public let store: Store
    /// Apple `originalTransactionId`; Google: the first purchase token of the `linkedPurchaseToken` chain.
    public let lineage: String
    public let environment: StoreEnvironment
    public let productID: String
    /// Google base plan; `nil` for Apple.
    public let basePlanID: String?
    public let state: StoreState
    public let periodStart: Date?
    public let expiresAt: Date?
    public let graceEndsAt: Date?
    public let autoRenew: Bool
    /// The current period is a free trial.
    public let inFreeTrial: Bool
    public let ownership: Ownership
    /// Apple `appAccountToken`, Google `obfuscatedExternalAccountId`, verbatim.
    public let accountToken: String?
    /// Every charge seen in this answer (already-booked ones are skipped by the mirror).
    public let charges: [StoreCharge]
    /// Google: the purchase token this answer is about; `nil` for Apple.
    public var purchaseToken: String?
    /// Google purchase tokens of this lineage that `purchaseToken` replaced (upgrades, re-signups), oldest first.
    public var replacedTokens: [String]
    /// Google: a purchase token the store still waits to have acknowledged.
    public let needsAcknowledgement: Bool
    /// The store can take a refund back (Apple's `REFUND_REVERSED`), and each of its answers shows every charge
    /// it lists with the refund as it stands then. So a charge a fresh answer shows without the refund the mirror
    /// booked had it reversed; and a refund only an answer older than the mirror's state shows is booked already
    /// or was reversed since — every newer answer lists again each charge whose refund changed (Apple's history
    /// revisions) — so the mirror must not book it. Off for Google: a voided order is final whenever it is seen,
    /// and an answer that shows the charge without it (an order fetched without its voided record, or before
    /// Google's order history caught up) says nothing against it.
    public let refundsReversible: Bool
    /// When the store's answer was true; an older snapshot never overwrites a newer one.
    public let asOf: Date
    /// Where the store's next read of the lineage resumes, opaque to the mirror (Apple's transaction-history
    /// revision, so the next fetch is incremental): it belongs to the answer, so it travels with it rather than
    /// beside it. Stored with the purchase by the lineage's first apply and by fresh ones, never a stale one's,
    /// which may point behind what a newer answer read; `nil` keeps the stored cursor.
    public var cursor: String?
    public let source: SnapshotSource
    /// The store's answer as JSON, kept on the purchase for on-call.
    public let raw: String

    public init(store: Store, lineage: String, environment: StoreEnvironment, productID: String, basePlanID: String?,
                state: StoreState, periodStart: Date?, expiresAt: Date?, graceEndsAt: Date?, autoRenew: Bool,
                inFreeTrial: Bool, ownership: Ownership, accountToken: String?, charges: [StoreCharge],
                purchaseToken: String? = nil, replacedTokens: [String] = [], needsAcknowledgement: Bool = false,
                refundsReversible: Bool = false, asOf: Date, source: SnapshotSource, raw: String) {
        self.store = store
        self.lineage = lineage
        self.environment = environment
        self.productID = productID
        self.basePlanID = basePlanID
        self.state = state
        self.periodStart = periodStart
        self.expiresAt = expiresAt
        self.graceEndsAt = graceEndsAt
        self.autoRenew = autoRenew
        self.inFreeTrial = inFreeTrial
        self.ownership = ownership
        self.accountToken = accountToken
        self.charges = charges
        self.purchaseToken = purchaseToken
        self.replacedTokens = replacedTokens
        self.needsAcknowledgement = needsAcknowledgement
        self.refundsReversible = refundsReversible
        self.asOf = asOf
        self.source = source
        self.raw = raw
    }
}
