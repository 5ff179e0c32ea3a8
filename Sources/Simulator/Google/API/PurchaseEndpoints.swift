import Foundation

/// `purchases.subscriptionsv2.get`, `purchases.subscriptions.acknowledge`, `orders.get` and `orders.batchGet`.
extension PlayCore {
    /// Google stops answering for a subscription 60 days after it expired.
    static let queryableAfterExpiry: Int64 = 60 * 86_400_000
    static let maxAcknowledgeBody = 4 * 1024

    func subscriptionResource(_ packageName: String, _ token: String) throws -> [String: Any] {
        try state.withLock { state in try Self.queryable(token, packageName, in: state).resource }
    }

    /// Records the acknowledgement; a second one is refused as Google refuses it.
    func acknowledge(_ packageName: String, subscriptionId: String, token: String, body: Data) throws {
        guard body.count <= Self.maxAcknowledgeBody else { throw PlayAPIError.invalid("The request body is too large.", parameter: "body") }
        if !body.isEmpty {
            guard (try? JSONSerialization.jsonObject(with: body)) is [String: Any] else {
                throw PlayAPIError.invalid("Invalid JSON payload received.", parameter: "body")
            }
        }
        try state.withLock { state in
            var subscription = try Self.queryable(token, packageName, in: state)
            guard !subscription.acknowledged else { throw PlayAPIError.alreadyAcknowledged }
            subscription.acknowledged = true
            state.store(subscription)
            state.acknowledgements.append(PlayAcknowledgement(packageName: packageName, subscriptionId: subscriptionId,
                                                              purchaseToken: token, body: String(decoding: body, as: UTF8.self),
                                                              receivedAt: state.now))
        }
    }

    func orderResource(_ packageName: String, _ orderId: String) throws -> [String: Any] {
        try state.withLock { state in
            guard let order = state.orders[orderId], order.packageName == packageName else { throw PlayAPIError.orderNotFound }
            return order.resource
        }
    }

    /// 1…1000 distinct `orderIds`; "if any order ID is not found … the entire request will fail".
    func batchOrders(_ packageName: String, _ query: String?) throws -> [String: Any] {
        guard let items = QueryItems(query) else { throw PlayAPIError.invalid("Invalid query.", parameter: "orderIds") }
        let ids = items.values("orderIds")
        guard (1...1000).contains(ids.count), Set(ids).count == ids.count else {
            throw PlayAPIError.invalid("Between 1 and 1000 distinct order ids are required.", parameter: "orderIds")
        }
        return ["orders": try ids.map { try orderResource(packageName, $0) }]
    }

    /// The subscription `token` names, if Google would still answer for it in `packageName`.
    static func queryable(_ token: String, _ packageName: String, in state: PlayState) throws -> SimulatedPlaySubscription {
        guard let subscription = state.subscriptions[token] else { throw PlayAPIError.purchaseTokenNotFound }
        guard subscription.packageName == packageName else { throw PlayAPIError.purchaseTokenDoesNotMatchPackage }
        let expiredLongAgo = subscription.state == .expired && state.now - subscription.expiryTime > queryableAfterExpiry
        guard !subscription.noLongerAvailable, !expiredLongAgo else { throw PlayAPIError.noLongerAvailable }
        return subscription
    }
}
