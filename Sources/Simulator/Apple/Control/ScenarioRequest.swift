import Foundation

/// The scenario commands of the HTTP control API, `POST /simulator/scenario/{action}`: the same commands as
/// `AppStoreSimulator`'s Swift API, for the CLI and for processes other than the test.
public enum ScenarioAction: String, Sendable, CaseIterable {
    case subscribe
    case resubscribe
    case renew
    case failToRenew = "fail-to-renew"
    case expireGracePeriod = "expire-grace-period"
    case recover
    case expire
    case cancel
    case resume
    case upgrade
    case downgrade
    case refund
    case declineRefund = "decline-refund"
    case reverseRefund = "reverse-refund"
    case consumptionRequest = "consumption-request"
    case revokeFamilySharing = "revoke-family-sharing"
}

/// The JSON body of a control-API scenario command; which fields an action needs is in its documentation
/// on `AppStoreSimulator` (every action but `subscribe` names the subscription by `originalTransactionId`).
public struct ScenarioRequest: Sendable, Codable, Equatable {
    public var bundleId: String?
    public var originalTransactionId: String?
    public var transactionId: String?
    public var productId: String?
    /// Milliunits of `currency`.
    public var price: Int64?
    public var currency: String?
    public var appAccountToken: UUID?
    public var freeTrial: Bool?
    public var familyShared: Bool?
    public var grace: Bool?
    public var expirationReason: ExpirationReason?
    /// A prorated refund's share in milliunits (1…99999); absent for a full refund.
    public var percentage: Int?
    public var revocationReason: Int?
    public var consumptionRequestReason: ConsumptionRequestReason?
    public var silent: Bool?

    public init() {}
}

extension ScenarioAction {
    /// The state change this action makes with `request`'s arguments; a missing required one is an error.
    func change(_ request: ScenarioRequest) throws -> (inout StoreState) throws -> ScenarioEvent {
        let transactionId = request.transactionId
        switch self {
        case .subscribe:
            let purchase = StoreState.Purchase(
                bundleID: request.bundleId, productId: try required(request.productId, "productId"),
                price: try required(request.price, "price"), currency: try required(request.currency, "currency"),
                appAccountToken: request.appAccountToken, freeTrial: request.freeTrial ?? false,
                familyShared: request.familyShared ?? false)
            return { try $0.subscribe(purchase) }
        case .resubscribe:
            let id = try lineage(request)
            return { try $0.resubscribe(id, productId: request.productId, price: request.price) }
        case .renew:
            let id = try lineage(request)
            return { try $0.renew(id) }
        case .failToRenew:
            let id = try lineage(request)
            let grace = request.grace ?? false
            return { try $0.failToRenew(id, grace: grace) }
        case .expireGracePeriod:
            let id = try lineage(request)
            return { try $0.expireGracePeriod(id) }
        case .recover:
            let id = try lineage(request)
            return { try $0.recover(id) }
        case .expire:
            let id = try lineage(request)
            let reason = try required(request.expirationReason, "expirationReason")
            return { try $0.expire(id, reason: reason) }
        case .cancel:
            let id = try lineage(request)
            return { try $0.cancel(id) }
        case .resume:
            let id = try lineage(request)
            return { try $0.resume(id) }
        case .upgrade:
            let id = try lineage(request)
            let (product, price) = (try required(request.productId, "productId"), try required(request.price, "price"))
            return { try $0.upgrade(id, to: product, price: price) }
        case .downgrade:
            let id = try lineage(request)
            let (product, price) = (try required(request.productId, "productId"), try required(request.price, "price"))
            return { try $0.downgrade(id, to: product, price: price) }
        case .refund:
            let id = try lineage(request)
            return { try $0.refund(id, transactionId: transactionId, percentage: request.percentage,
                                   reason: request.revocationReason ?? 0) }
        case .declineRefund:
            let id = try lineage(request)
            return { try $0.declineRefund(id, transactionId: transactionId) }
        case .reverseRefund:
            let id = try lineage(request)
            return { try $0.reverseRefund(id, transactionId: transactionId) }
        case .consumptionRequest:
            let id = try lineage(request)
            let reason = try required(request.consumptionRequestReason, "consumptionRequestReason")
            return { try $0.requestConsumption(id, transactionId: transactionId, reason: reason) }
        case .revokeFamilySharing:
            let id = try lineage(request)
            return { try $0.revokeFamilySharing(id) }
        }
    }

    private func lineage(_ request: ScenarioRequest) throws -> String {
        try required(request.originalTransactionId, "originalTransactionId")
    }

    private func required<T>(_ value: T?, _ name: String) throws -> T {
        guard let value else { throw SimulatorError(.invalidArgument, "\(rawValue) needs \(name)") }
        return value
    }
}
