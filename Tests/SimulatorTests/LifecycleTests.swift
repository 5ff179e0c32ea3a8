import AppStore
import Foundation
import Simulator
import Testing

/// The scenario rules: each command's notification type and subtype, the status it leaves, and the
/// commands the App Store could not have produced in a subscription's state.
@Suite struct LifecycleTests {
    /// A scenario step, named as in the table below.
    enum Step: String, Sendable, CustomTestStringConvertible {
        case renew, failToRenew, failToRenewWithGrace, expireGracePeriod, recover, cancel, resume
        case expireVoluntary, expireBillingRetry, expirePriceIncrease, expireNotForSale, expireOther
        case upgrade, downgrade, revertDowngrade, refund, refundProrated, declineRefund, reverseRefund
        case consumptionRequest, resubscribe, revokeFamily

        var testDescription: String { rawValue }

        func run(_ simulator: AppStoreSimulator, _ id: String) async throws -> ScenarioResult {
            switch self {
            case .renew: try await simulator.renew(id)
            case .failToRenew: try await simulator.failToRenew(id)
            case .failToRenewWithGrace: try await simulator.failToRenew(id, grace: true)
            case .expireGracePeriod: try await simulator.expireGracePeriod(id)
            case .recover: try await simulator.recover(id)
            case .cancel: try await simulator.cancel(id)
            case .resume: try await simulator.resume(id)
            case .expireVoluntary: try await simulator.expire(id, reason: .voluntary)
            case .expireBillingRetry: try await simulator.expire(id, reason: .billingRetry)
            case .expirePriceIncrease: try await simulator.expire(id, reason: .priceIncrease)
            case .expireNotForSale: try await simulator.expire(id, reason: .productNotForSale)
            case .expireOther: try await simulator.expire(id, reason: .other)
            case .upgrade: try await simulator.upgrade(id, to: Fixture.yearly, price: 99_990)
            case .downgrade: try await simulator.downgrade(id, to: Fixture.basic, price: 4990)
            case .revertDowngrade: try await simulator.downgrade(id, to: Fixture.monthly, price: 9990)
            case .refund: try await simulator.refund(id)
            case .refundProrated: try await simulator.refund(id, percentage: 40_000, revocationReason: 1)
            case .declineRefund: try await simulator.declineRefund(id)
            case .reverseRefund: try await simulator.reverseRefund(id)
            case .consumptionRequest: try await simulator.requestConsumption(id, reason: .fulfillmentIssue)
            case .resubscribe: try await simulator.resubscribe(id)
            case .revokeFamily: try await simulator.revokeFamilySharing(id)
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let setup: [Step]
        let step: Step
        let type: String
        let subtype: String?
        let status: SubscriptionStatus
        var familyShared = false

        var testDescription: String { (setup + [step]).map(\.rawValue).joined(separator: " → ") }
    }

    @Test("each command notifies with Apple's type and subtype and leaves Apple's status", arguments: [
        Case(setup: [], step: .renew, type: "DID_RENEW", subtype: nil, status: .active),
        Case(setup: [], step: .failToRenew, type: "DID_FAIL_TO_RENEW", subtype: nil, status: .billingRetry),
        Case(setup: [], step: .failToRenewWithGrace, type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", status: .gracePeriod),
        Case(setup: [.failToRenewWithGrace], step: .expireGracePeriod, type: "GRACE_PERIOD_EXPIRED", subtype: nil, status: .billingRetry),
        Case(setup: [.failToRenew], step: .recover, type: "DID_RENEW", subtype: "BILLING_RECOVERY", status: .active),
        Case(setup: [.failToRenewWithGrace], step: .recover, type: "DID_RENEW", subtype: "BILLING_RECOVERY", status: .active),
        Case(setup: [.failToRenew], step: .expireBillingRetry, type: "EXPIRED", subtype: "BILLING_RETRY", status: .expired),
        Case(setup: [], step: .cancel, type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", status: .active),
        Case(setup: [.cancel], step: .resume, type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", status: .active),
        Case(setup: [.cancel], step: .expireVoluntary, type: "EXPIRED", subtype: "VOLUNTARY", status: .expired),
        Case(setup: [], step: .expirePriceIncrease, type: "EXPIRED", subtype: "PRICE_INCREASE", status: .expired),
        Case(setup: [], step: .expireNotForSale, type: "EXPIRED", subtype: "PRODUCT_NOT_FOR_SALE", status: .expired),
        Case(setup: [], step: .expireOther, type: "EXPIRED", subtype: nil, status: .expired),
        Case(setup: [], step: .upgrade, type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", status: .active),
        Case(setup: [], step: .downgrade, type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", status: .active),
        Case(setup: [.downgrade], step: .revertDowngrade, type: "DID_CHANGE_RENEWAL_PREF", subtype: nil, status: .active),
        Case(setup: [], step: .refund, type: "REFUND", subtype: nil, status: .revoked),
        Case(setup: [], step: .refundProrated, type: "REFUND", subtype: nil, status: .revoked),
        Case(setup: [], step: .declineRefund, type: "REFUND_DECLINED", subtype: nil, status: .active),
        Case(setup: [.refund], step: .reverseRefund, type: "REFUND_REVERSED", subtype: nil, status: .active),
        Case(setup: [], step: .consumptionRequest, type: "CONSUMPTION_REQUEST", subtype: nil, status: .active),
        Case(setup: [.cancel, .expireVoluntary], step: .resubscribe, type: "SUBSCRIBED", subtype: "RESUBSCRIBE", status: .active),
        Case(setup: [.refund], step: .resubscribe, type: "SUBSCRIBED", subtype: "RESUBSCRIBE", status: .active),
        Case(setup: [], step: .revokeFamily, type: "REVOKE", subtype: nil, status: .revoked, familyShared: true),
    ])
    func commandNotifiesAndSetsStatus(_ test: Case) async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe(familyShared: test.familyShared)
        for step in test.setup { _ = try await step.run(harness.simulator, id) }
        let result = try await test.step.run(harness.simulator, id)

        let notification = try harness.verifier.verifyNotification(#require(result.notification?.signedPayload))
        #expect(notification.notificationType == test.type)
        #expect(notification.subtype == test.subtype)
        #expect(notification.data?.status == test.status.rawValue)
        #expect(result.status == test.status)
        #expect(harness.simulator.subscription(id)?.status == test.status)
        await harness.close()
    }

    @Test("commands the App Store could not have produced are refused and change nothing", arguments: [
        ([Step.failToRenew], Step.renew), ([.cancel], .renew), ([.cancel], .failToRenew), ([], .recover),
        ([], .expireGracePeriod), ([.failToRenew], .expireGracePeriod), ([], .expireVoluntary), ([], .expireBillingRetry),
        ([], .resume), ([.cancel], .cancel), ([.refund], .refund), ([], .reverseRefund), ([], .resubscribe),
        ([.refund], .renew), ([.cancel, .expireVoluntary], .upgrade), ([], .revertDowngrade), ([], .revokeFamily),
        ([.cancel, .expireVoluntary], .expireOther),
    ])
    func impossibleCommandsAreRefused(_ setup: [Step], _ step: Step) async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        for earlier in setup { _ = try await earlier.run(harness.simulator, id) }
        let before = harness.simulator.subscription(id)
        let clock = harness.simulator.now

        #expect(await simulatorErrorCode { _ = try await step.run(harness.simulator, id) } == .invalidState)
        #expect(harness.simulator.subscription(id) == before)
        #expect(harness.simulator.now == clock)
        await harness.close()
    }

    @Test func aFreeTrialIsFreeAndRenewsAtThePrice() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe(freeTrial: true)
        let trial = try #require(harness.simulator.transaction(id))
        #expect(trial.price == 0 && trial.offer == .freeTrial)
        #expect(trial.expiresDate == Fixture.start.addingTimeInterval(7 * 86_400))
        let renewed = try #require(harness.simulator.transaction(try await harness.simulator.renew(id).transactionId))
        #expect(renewed.price == 9990 && renewed.offer == nil)
        #expect(renewed.purchaseDate == trial.expiresDate)
        #expect(renewed.expiresDate == trial.expiresDate.addingTimeInterval(30 * 86_400))
        await harness.close()
    }

    @Test func anUpgradeStartsNowAndRefundsTheUnusedShareOfTheOldPeriod() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        try harness.simulator.advanceClock(by: .seconds(6 * 86_400))  // 6 of 30 days used: 80 % unused
        let result = try await harness.simulator.upgrade(id, to: Fixture.yearly, price: 99_990)

        let old = try #require(harness.simulator.transaction(id))
        #expect(old.isUpgraded)
        #expect(old.revocation?.kind == .refundProrated)
        #expect(old.revocation?.percentage == 80_000)
        #expect(old.revocation?.date == harness.simulator.now)
        let new = try #require(harness.simulator.transaction(result.transactionId))
        #expect(new.productId == Fixture.yearly && new.price == 99_990 && new.transactionReason == .purchase)
        #expect(new.purchaseDate == harness.simulator.now)
        let renewal = try #require(harness.simulator.subscription(id)?.renewalInfo)
        #expect(renewal.productId == Fixture.yearly && renewal.autoRenewProductId == Fixture.yearly)
        await harness.close()
    }

    /// A simulator whose yearly product runs 365 days beside the app's 30-day renewal period.
    private func yearlyHarness() throws -> Harness {
        var app = try Fixture.app()
        app.productPeriods = [Fixture.yearly: .seconds(365 * 86_400)]
        return try Harness(apps: [app], notify: false)
    }

    /// The transaction a scenario's notification signs.
    private func signedTransaction(_ result: ScenarioResult, _ harness: Harness) throws -> TransactionPayload {
        let notification = try harness.verifier.verifyNotification(#require(result.notification?.signedPayload))
        return try harness.verifier.verifyTransaction(#require(notification.data?.signedTransactionInfo))
    }

    @Test func aProductWithItsOwnPeriodIsBoughtAndRenewedForThatPeriod() async throws {
        let harness = try yearlyHarness()
        let year: TimeInterval = 365 * 86_400
        let bought = try await harness.simulator.subscribe(productId: Fixture.yearly, price: 99_990, currency: "USD")
        let first = try signedTransaction(bought, harness)
        #expect(first.purchaseDate == Fixture.start && first.expiresDate == Fixture.start.addingTimeInterval(year))
        let renewed = try signedTransaction(try await harness.simulator.renew(bought.originalTransactionId), harness)
        #expect(renewed.purchaseDate == Fixture.start.addingTimeInterval(year))
        #expect(renewed.expiresDate == Fixture.start.addingTimeInterval(2 * year))
        #expect(harness.simulator.subscription(bought.originalTransactionId)?.renewalInfo.renewalDate == renewed.expiresDate)

        let monthly = try #require(harness.simulator.transaction(try await harness.subscribe()))
        #expect(monthly.expiresDate == monthly.purchaseDate.addingTimeInterval(30 * 86_400))
        await harness.close()
    }

    @Test func anUpgradeOrDowngradeRunsForTheNewProductsPeriod() async throws {
        let harness = try yearlyHarness()
        let id = try await harness.subscribe()
        try harness.simulator.advanceClock(by: .seconds(6 * 86_400))
        let upgraded = try signedTransaction(try await harness.simulator.upgrade(id, to: Fixture.yearly, price: 99_990), harness)
        #expect(upgraded.purchaseDate == harness.simulator.now)
        #expect(upgraded.expiresDate == harness.simulator.now.addingTimeInterval(365 * 86_400))

        try await harness.simulator.downgrade(id, to: Fixture.monthly, price: 9990, silent: true)
        let downgraded = try signedTransaction(try await harness.simulator.renew(id), harness)
        #expect(downgraded.productId == Fixture.monthly && downgraded.purchaseDate == upgraded.expiresDate)
        #expect(downgraded.expiresDate == upgraded.expiresDate?.addingTimeInterval(30 * 86_400))
        await harness.close()
    }

    @Test func aDowngradeTakesEffectAtTheNextRenewal() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        try await harness.simulator.downgrade(id, to: Fixture.basic, price: 4990, silent: true)
        #expect(harness.simulator.subscription(id)?.renewalInfo.productId == Fixture.monthly)
        let renewed = try await harness.simulator.renew(id, silent: true)
        let transaction = try #require(harness.simulator.transaction(renewed.transactionId))
        #expect(transaction.productId == Fixture.basic && transaction.price == 4990)
        #expect(harness.simulator.subscription(id)?.renewalInfo.productId == Fixture.basic)
        await harness.close()
    }

    @Test func recoveryInTheGracePeriodKeepsTheRenewalDateAndLaterRecoveryStartsNow() async throws {
        let harness = try Harness(notify: false)
        let graced = try await harness.subscribe()
        let boundary = try #require(harness.simulator.transaction(graced)).expiresDate
        try await harness.simulator.failToRenew(graced, grace: true, silent: true)
        #expect(harness.simulator.subscription(graced)?.renewalInfo.gracePeriodExpiresDate == boundary.addingTimeInterval(16 * 86_400))
        try harness.simulator.advanceClock(by: .seconds(86_400))
        let inGrace = try #require(harness.simulator.transaction(try await harness.simulator.recover(graced, silent: true).transactionId))
        #expect(inGrace.purchaseDate == boundary)

        let retried = try await harness.subscribe()
        try await harness.simulator.failToRenew(retried, silent: true)
        try harness.simulator.advanceClock(by: .seconds(3 * 86_400))
        let later = try #require(harness.simulator.transaction(try await harness.simulator.recover(retried, silent: true).transactionId))
        #expect(later.purchaseDate == harness.simulator.now)
        await harness.close()
    }

    @Test func reversingARefundRestoresAccessAndAutoRenew() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        try await harness.simulator.refund(id, silent: true)
        #expect(harness.simulator.subscription(id)?.renewalInfo.autoRenewStatus == false)
        try await harness.simulator.reverseRefund(id, silent: true)
        let subscription = try #require(harness.simulator.subscription(id))
        #expect(subscription.status == .active && subscription.renewalInfo.autoRenewStatus)
        #expect(harness.simulator.transaction(id)?.revocation == nil)
        await harness.close()
    }

    @Test("reversing a refund in billing retry returns to it, with the grace period while it lasts", arguments: [
        (true, 0, SubscriptionStatus.gracePeriod), (true, 17, .billingRetry), (false, 0, .billingRetry), (false, 17, .billingRetry),
    ])
    func reversingARefundInBillingRetryRestoresItsStatus(grace: Bool, daysLater: Int, expected: SubscriptionStatus) async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        try await harness.simulator.failToRenew(id, grace: grace, silent: true)
        try await harness.simulator.refund(id, silent: true)
        try harness.simulator.advanceClock(by: .seconds(daysLater * 86_400))  // 17 days: past the 16-day grace period
        let reversed = try await harness.simulator.reverseRefund(id)

        let notification = try harness.verifier.verifyNotification(#require(reversed.notification?.signedPayload))
        #expect(notification.data?.status == expected.rawValue)
        let subscription = try #require(harness.simulator.subscription(id))
        #expect(subscription.status == expected)
        #expect(subscription.renewalInfo.autoRenewStatus && subscription.renewalInfo.isInBillingRetryPeriod)
        try await harness.simulator.recover(id, silent: true)
        #expect(harness.simulator.subscription(id)?.status == .active)
        await harness.close()
    }

    @Test("a family member cannot ask for a refund: refunds, declines and consumption requests are refused", arguments: [
        Step.refund, .refundProrated, .declineRefund, .consumptionRequest,
    ])
    func familySharedRefundsAreRefused(_ step: Step) async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe(familyShared: true)
        let subscription = harness.simulator.subscription(id)
        let transaction = harness.simulator.transaction(id)

        let error = await #expect(throws: SimulatorError.self) { _ = try await step.run(harness.simulator, id) }
        #expect(error?.code == .invalidState)
        #expect(error?.message.contains("revoke-family-sharing") == true)
        #expect(harness.simulator.subscription(id) == subscription)
        #expect(harness.simulator.transaction(id) == transaction)
        await harness.close()
    }

    typealias Command = @Sendable (AppStoreSimulator) async throws -> Void

    @Test("arguments out of range are refused", arguments: [
        ("empty product", SimulatorError.Code.invalidArgument,
         { s in _ = try await s.subscribe(productId: "", price: 1, currency: "USD") } as Command),
        ("negative price", .invalidArgument, { s in _ = try await s.subscribe(productId: "p", price: -1, currency: "USD") }),
        ("bad currency", .invalidArgument, { s in _ = try await s.subscribe(productId: "p", price: 1, currency: "usd") }),
        ("unknown app", .unknownApp, { s in _ = try await s.subscribe(bundleID: "com.nowhere", productId: "p", price: 1, currency: "USD") }),
        ("prorated 100 %", .invalidArgument, { s in
            let id = try await s.subscribe(productId: "p", price: 1, currency: "USD", silent: true).originalTransactionId
            _ = try await s.refund(id, percentage: 100_000)
        }),
        ("resend 0 times", .invalidArgument, { s in _ = try await s.resendLastNotification(times: 0) }),
        ("nothing to resend", .nothingToResend, { s in _ = try await s.resendLastNotification() }),
    ] as [(String, SimulatorError.Code, Command)])
    func badArgumentsAreRefused(_ name: String, _ expected: SimulatorError.Code, _ command: Command) async throws {
        let harness = try Harness(notify: false)
        #expect(await simulatorErrorCode { try await command(harness.simulator) } == expected, "\(name)")
        await harness.close()
    }

    @Test func unknownSubscriptionsAndForeignTransactionsAreNotFound() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let other = try await harness.subscribe()
        #expect(await simulatorErrorCode { _ = try await harness.simulator.renew("42") } == .notFound)
        #expect(await simulatorErrorCode { _ = try await harness.simulator.refund(id, transactionId: other) } == .notFound)
        await harness.close()
    }

    @Test func theClockOnlyMovesForward() async throws {
        let harness = try Harness(notify: false)
        harness.simulator.advanceClock(to: Fixture.start.addingTimeInterval(-60))
        #expect(harness.simulator.now == Fixture.start)
        #expect(await simulatorErrorCode { try harness.simulator.advanceClock(by: .seconds(-1)) } == .invalidArgument)
        try harness.simulator.advanceClock(by: .milliseconds(1500))
        #expect(harness.simulator.now == Fixture.start.addingTimeInterval(1.5))
        await harness.close()
    }

    @Test func aBadConfigurationIsRefused() throws {
        var productionWithoutID = try Fixture.app()
        productionWithoutID.appAppleID = nil
        var zeroPeriod = try Fixture.app()
        zeroPeriod.renewalPeriod = .zero
        var zeroProductPeriod = try Fixture.app()
        zeroProductPeriod.productPeriods = [Fixture.yearly: .zero]
        var endlessProductPeriod = try Fixture.app()
        endlessProductPeriod.productPeriods = [Fixture.yearly: .seconds(101 * 365 * 86_400)]
        var unnamedProductPeriod = try Fixture.app()
        unnamedProductPeriod.productPeriods = ["": .seconds(86_400)]
        for apps in [[], [productionWithoutID], [zeroPeriod], [zeroProductPeriod], [endlessProductPeriod], [unnamedProductPeriod],
                     [try Fixture.app(), try Fixture.app()]] {
            #expect(throws: SimulatorError.self) { try AppStoreSimulator(configuration: SimulatorConfiguration(apps: apps)) }
        }
    }
}
