/// Get All Subscription Statuses' answer with every nested JWS verified. The top-level fields are not
/// signed and only describe the answer; the signed payloads are what counts.
public struct SubscriptionStatuses: Sendable {
    public let environment: AppStoreEnvironment?
    public let bundleID: String?
    public let appAppleID: Int64?
    public let groups: [Group]

    /// One subscription group's `lastTransactions`: one entry per entitlement, so two when the customer has
    /// both a purchase of their own and a family-shared one in the group.
    public struct Group: Sendable {
        public let subscriptionGroupIdentifier: String?
        public let lastTransactions: [LastTransaction]

        public init(subscriptionGroupIdentifier: String?, lastTransactions: [LastTransaction]) {
            self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
            self.lastTransactions = lastTransactions
        }
    }

    /// The latest state of one lineage.
    public struct LastTransaction: Sendable {
        /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
        public let status: Int
        public let originalTransactionID: String
        /// The lineage's latest transaction.
        public let transaction: Verified<TransactionPayload>
        /// Absent only for products that do not renew.
        public let renewalInfo: Verified<RenewalInfoPayload>?

        public init(status: Int, originalTransactionID: String, transaction: Verified<TransactionPayload>,
                    renewalInfo: Verified<RenewalInfoPayload>?) {
            self.status = status
            self.originalTransactionID = originalTransactionID
            self.transaction = transaction
            self.renewalInfo = renewalInfo
        }
    }

    public init(environment: AppStoreEnvironment?, bundleID: String?, appAppleID: Int64?, groups: [Group]) {
        self.environment = environment
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.groups = groups
    }

    /// The entry of `lineage` (an `originalTransactionId`) and its group's identifier, when the answer has one.
    public func entry(lineage: String) -> (group: String?, entry: LastTransaction)? {
        for group in groups {
            if let entry = group.lastTransactions.first(where: { $0.originalTransactionID == lineage }) {
                return (group.subscriptionGroupIdentifier, entry)
            }
        }
        return nil
    }
}

/// Get Transaction History's pages, every signed transaction verified.
public struct TransactionHistory: Sendable {
    /// In Apple's order (ascending by modification), the same transaction possibly more than once when it
    /// changed while paging: the later occurrence is the newer.
    public let transactions: [Verified<TransactionPayload>]
    /// Where the next call continues: store it per lineage and pass it back to fetch only what changed since.
    public let revision: String?
    /// Apple has further pages this call did not fetch (it stops at its page bound); call again with `revision`.
    public let hasMore: Bool

    public init(transactions: [Verified<TransactionPayload>], revision: String?, hasMore: Bool) {
        self.transactions = transactions
        self.revision = revision
        self.hasMore = hasMore
    }
}
