/// The scope a notification's dedup receipt is kept under (see `NotificationReceipts`): what its store guarantees the
/// message id unique within, and no wider, so one tenant's notification is never taken for a duplicate of
/// another's and dropped.
public enum ReceiptScope {
    /// Apple's `notificationUUID` is a UUID inside the payload Apple signs: unique across every app and
    /// account, and no tenant can make one up for another. It needs no scope.
    public static let apple = ""

    /// A Pub/Sub `messageId` is unique only within its topic, and a push's `subscription`
    /// (`projects/{project}/subscriptions/{name}`) reads exactly one topic. The account comes first because the
    /// envelope is not signed: the push's OIDC token proves which connection it is for, not which subscription
    /// it came from, so a tenant could name another's subscription — and then only meet its own receipts.
    ///
    /// A push without a subscription (ingest refuses those; a job stored another way may lack one) is scoped by
    /// the account and the app's package instead: a Play app publishes its notifications to one topic, so
    /// this is as narrow as the topic, and, unlike a connection id, it is known before the connections are read.
    /// The two forms never meet: a subscription has no spaces (`PubSubPush` refuses them), so its scope has
    /// exactly one, and the package form at least two.
    public static func google(accountID: Int64, subscription: String?, packageName: String) -> String {
        if let subscription, !subscription.isEmpty { return "\(accountID) \(subscription)" }
        return "\(accountID) package \(packageName)"
    }
}
