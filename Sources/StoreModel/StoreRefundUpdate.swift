import Foundation

/// What a store still says about a lineage when it no longer answers for the purchase itself: Google forgets a
/// subscription about 60 days after it expired, yet still voids (refunds, charges back) its orders later. Only
/// refunds, of charges the mirror booked before: the answer carries no store state, so the mirror keeps the one
/// it holds rather than guess an expiry or a state from a refund.
public struct StoreRefundUpdate: Sendable, Hashable {
    /// One refunded charge.
    public struct Refund: Sendable, Hashable {
        /// The refunded charge: Apple `transactionId`, Google order id.
        public let transactionID: String
        /// All the store has refunded of the charge so far (refunds only grow).
        public let refund: StoreRefund

        public init(transactionID: String, refund: StoreRefund) {
            self.transactionID = transactionID
            self.refund = refund
        }
    }

    public let store: Store
    /// The lineage the mirror filed the charges under.
    public let lineage: String
    public let refunds: [Refund]
    /// When the store's answers were read.
    public let asOf: Date
    public let source: SnapshotSource

    public init(store: Store, lineage: String, refunds: [Refund], asOf: Date, source: SnapshotSource) {
        self.store = store
        self.lineage = lineage
        self.refunds = refunds
        self.asOf = asOf
        self.source = source
    }
}
