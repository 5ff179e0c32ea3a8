import Foundation

/// A Real-time developer notification before it is published: the `DeveloperNotification` Google puts,
/// base64-encoded, in the Pub/Sub message's `data`.
struct PlayNotification: Sendable {
    enum Content: Sendable {
        /// `subscriptionNotification`; `subscriptionId` is deprecated but Google still sends it.
        case subscription(SubscriptionNotificationType, purchaseToken: String, subscriptionId: String)
        /// `voidedPurchaseNotification` for a subscription (`productType` 1).
        case voided(purchaseToken: String, orderId: String, refundType: Int)
        /// `testNotification`, sent from Play Console.
        case test
    }

    let packageName: String
    /// Milliseconds since 1970 on the simulated clock.
    let eventTime: Int64
    let content: Content

    /// The `DeveloperNotification` JSON; `eventTimeMillis` is a string, as Google sends it.
    func json() throws -> Data {
        var body: [String: Any] = ["version": "1.0", "packageName": packageName, "eventTimeMillis": String(eventTime)]
        switch content {
        case .subscription(let type, let token, let subscriptionId):
            body["subscriptionNotification"] = ["version": "1.0", "notificationType": type.rawValue, "purchaseToken": token,
                                                "subscriptionId": subscriptionId] as [String: Any]
        case .voided(let token, let orderId, let refundType):
            body["voidedPurchaseNotification"] = ["purchaseToken": token, "orderId": orderId, "productType": 1,
                                                  "refundType": refundType] as [String: Any]
        case .test:
            body["testNotification"] = ["version": "1.0"]
        }
        return try JSONBody.encode(body)
    }

    var kind: PlayPushRecord.Kind {
        switch content {
        case .subscription: .subscription
        case .voided: .voidedPurchase
        case .test: .test
        }
    }

    var notificationType: Int? {
        if case .subscription(let type, _, _) = content { return type.rawValue }
        return nil
    }

    var purchaseToken: String? {
        switch content {
        case .subscription(_, let token, _), .voided(let token, _, _): token
        case .test: nil
        }
    }
}
