/// The scenario commands of the HTTP control API, `POST /simulator/google/scenario/{action}`: the same
/// commands as `PlaySimulator`'s Swift API, for the CLI and for processes other than the test.
public enum PlayScenarioAction: String, Sendable, CaseIterable {
    case purchase
    case renew
    case grace
    case accountHold = "account-hold"
    case recover
    case pause
    case resume
    case cancel
    case restart
    case expire
    case upgrade
    case downgrade
    case refund
    case expireLongAgo = "expire-long-ago"
    case testNotification = "test-notification"
}

/// The JSON body of a control-API scenario command; which fields an action needs is in its documentation on
/// `PlaySimulator` (every action but `purchase` and `test-notification` names the token).
public struct PlayScenarioRequest: Sendable, Codable, Equatable {
    public var packageName: String?
    public var purchaseToken: String?
    public var productId: String?
    public var basePlanId: String?
    public var offerId: String?
    /// Minor units of `currency`, tax included.
    public var price: Int64?
    public var tax: Int64?
    public var currency: String?
    public var obfuscatedAccountId: String?
    public var obfuscatedProfileId: String?
    public var testPurchase: Bool?
    public var regionCode: String?
    public var pauseMilliseconds: Int64?
    public var cancelledBy: PlayCancellationSource?
    public var orderId: String?
    public var revoke: Bool?
    /// Minor units for a partial refund.
    public var partialAmount: Int64?
    public var voidedSource: VoidedSource?
    public var voidedReason: VoidedReason?
    public var silent: Bool?

    public init() {}
}

extension PlayScenarioAction {
    /// The state change this action makes with `request`'s arguments; a missing required one is an error.
    /// `test-notification` changes nothing and is handled by the caller.
    func change(_ request: PlayScenarioRequest) throws -> (inout PlayState) throws -> PlayChange {
        switch self {
        case .purchase:
            let purchase = PlayState.Purchase(
                packageName: request.packageName, productId: try required(request.productId, "productId"),
                basePlanId: try required(request.basePlanId, "basePlanId"), offerId: request.offerId,
                price: try required(request.price, "price"), tax: request.tax ?? 0, currency: try required(request.currency, "currency"),
                obfuscatedAccountId: request.obfuscatedAccountId, obfuscatedProfileId: request.obfuscatedProfileId,
                testPurchase: request.testPurchase ?? false, regionCode: request.regionCode)
            return { try $0.purchase(purchase) }
        case .renew:
            let token = try token(request)
            return { try $0.renew(token) }
        case .grace:
            let token = try token(request)
            return { try $0.enterGracePeriod(token) }
        case .accountHold:
            let token = try token(request)
            return { try $0.enterAccountHold(token) }
        case .recover:
            let token = try token(request)
            return { try $0.recover(token) }
        case .pause:
            let token = try token(request)
            let duration = Duration.milliseconds(try required(request.pauseMilliseconds, "pauseMilliseconds"))
            return { try $0.pause(token, for: duration) }
        case .resume:
            let token = try token(request)
            return { try $0.resume(token) }
        case .cancel:
            let token = try token(request)
            let source = request.cancelledBy ?? .user
            return { try $0.cancel(token, source: source) }
        case .restart:
            let token = try token(request)
            return { try $0.restart(token) }
        case .expire:
            let token = try token(request)
            return { try $0.expire(token) }
        case .upgrade, .downgrade:
            let token = try token(request)
            let replacement = PlayState.Replacement(
                productId: try required(request.productId, "productId"), basePlanId: try required(request.basePlanId, "basePlanId"),
                offerId: request.offerId, price: try required(request.price, "price"), tax: request.tax ?? 0,
                mode: self == .upgrade ? "CHARGE_PRORATED_PRICE" : "WITHOUT_PRORATION")
            return { try $0.replace(token, with: replacement) }
        case .refund:
            let token = try token(request)
            let refund = PlayState.Refund(orderId: request.orderId, revoke: request.revoke ?? true,
                                          partialAmount: request.partialAmount, source: request.voidedSource ?? .developer,
                                          reason: request.voidedReason ?? .other)
            return { try $0.refund(token, refund) }
        case .expireLongAgo:
            let token = try token(request)
            return { try $0.expireLongAgo(token) }
        case .testNotification:
            throw SimulatorError(.invalidArgument, "test-notification changes no state")
        }
    }

    private func token(_ request: PlayScenarioRequest) throws -> String {
        try required(request.purchaseToken, "purchaseToken")
    }

    private func required<T>(_ value: T?, _ name: String) throws -> T {
        guard let value else { throw SimulatorError(.invalidArgument, "\(rawValue) needs \(name)") }
        return value
    }
}
