import Foundation
import HTTP

/// Get All Subscription Statuses: the lineage of any of its transaction ids, its latest transaction and
/// renewal info signed now, optionally filtered by `status` (repeatable, 1…5).
extension SimulatorCore {
    func statuses(_ request: HTTPRequest, app: SimulatedApp) throws -> HTTPResponse {
        let id = try transactionID(in: request, after: Self.statusPrefix)
        guard let query = QueryItems(request.query) else { throw AppleAPIError.generalBadRequest }
        let wanted = try Set(query.values("status").map { text -> SubscriptionStatus in
            guard let value = Int(text), let status = SubscriptionStatus(rawValue: value) else { throw AppleAPIError.invalidStatus }
            return status
        })
        let (subscription, transaction, now) = try state.withLock { state in
            let subscription = try lineage(of: id, app: app, in: state)
            return (subscription, state.latestTransaction(of: subscription), state.now)
        }
        var body = envelope(app)
        var data: [[String: Any]] = []
        if wanted.isEmpty || wanted.contains(subscription.status) {
            let last: [String: Any] = [
                "status": subscription.status.rawValue, "originalTransactionId": subscription.originalTransactionId,
                "signedTransactionInfo": try signer.transaction(transaction, signedDate: now),
                "signedRenewalInfo": try signer.renewalInfo(subscription.renewalInfo, signedDate: now),
            ]
            data.append(["subscriptionGroupIdentifier": subscription.subscriptionGroupIdentifier, "lastTransactions": [last]])
        }
        body["data"] = data
        return .json(200, try JSONBody.string(body))
    }
}
