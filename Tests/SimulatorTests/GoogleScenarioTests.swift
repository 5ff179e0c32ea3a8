import Foundation
import HTTP
import Simulator
import Testing

/// Scenario commands change the simulated Play Store and push the Real-time developer notifications Google
/// sends for them, wrapped as Pub/Sub push messages.
@Suite struct GoogleScenarioTests {
    /// One scenario command, applied to the token the previous steps left.
    enum Step: Sendable {
        case renew, grace, hold, recover, pause, resume, cancel, restart, expire, upgrade, downgrade, refund, refundKeepingAccess,
             expireLongAgo

        func apply(_ simulator: PlaySimulator, _ token: String, silent: Bool) async throws -> PlayScenarioResult {
            switch self {
            case .renew: try await simulator.renew(token, silent: silent)
            case .grace: try await simulator.enterGracePeriod(token, silent: silent)
            case .hold: try await simulator.enterAccountHold(token, silent: silent)
            case .recover: try await simulator.recover(token, silent: silent)
            case .pause: try await simulator.pause(token, for: .seconds(7 * 86_400), silent: silent)
            case .resume: try await simulator.resume(token, silent: silent)
            case .cancel: try await simulator.cancel(token, silent: silent)
            case .restart: try await simulator.restart(token, silent: silent)
            case .expire: try await simulator.expire(token, silent: silent)
            case .upgrade: try await simulator.upgrade(token, to: GoogleFixture.yearly, basePlanId: "yearly", price: 9999, silent: silent)
            case .downgrade: try await simulator.downgrade(token, to: "basic_monthly", basePlanId: "monthly", price: 499, silent: silent)
            case .refund: try await simulator.refund(token, silent: silent)
            case .refundKeepingAccess: try await simulator.refund(token, revoke: false, silent: silent)
            case .expireLongAgo: try await simulator.expireLongAgo(token, silent: silent)
            }
        }
    }

    /// Steps before the command (silent), the command, the notification types it pushes (`nil` for a
    /// voided-purchase notification) and the state it leaves.
    static let table: [([Step], Step, [Int?], PlaySubscriptionState)] = [
        ([], .renew, [2], .active),
        ([], .grace, [6], .inGracePeriod),
        ([], .hold, [5], .onHold),
        ([.grace], .hold, [5], .onHold),
        ([.grace], .recover, [1], .active),
        ([.hold], .recover, [1], .active),
        ([], .pause, [10], .paused),
        ([.pause], .resume, [1], .active),
        ([], .cancel, [3], .canceled),
        ([.cancel], .restart, [7], .active),
        ([.cancel], .expire, [13], .expired),
        ([.hold], .expire, [13], .expired),
        ([.grace], .expire, [13], .expired),
        ([], .upgrade, [4], .active),
        ([], .downgrade, [4], .active),
        ([], .refund, [nil, 12], .expired),
        ([.renew], .refundKeepingAccess, [nil], .active),
        ([.cancel, .expire], .expireLongAgo, [13], .expired),
        ([.cancel, .expire, .expireLongAgo], .refundKeepingAccess, [nil], .expired),
    ]

    @Test("each command pushes Google's notification type and leaves Google's state", arguments: table)
    func command(_ before: [Step], _ command: Step, _ types: [Int?], _ state: PlaySubscriptionState) async throws {
        let harness = try GoogleHarness()
        var token = try await harness.purchase()
        for step in before { token = try #require(try await step.apply(harness.simulator, token, silent: true).purchaseToken) }
        let result = try await command.apply(harness.simulator, token, silent: false)

        #expect(result.subscriptionState == state)
        #expect(result.pushes.map(\.notificationType) == types)
        #expect(result.pushes.allSatisfy { $0.acknowledged && $0.attempts.count == 1 })
        let messages = try harness.ingest.messages()
        #expect(messages.map(\.notificationType) == types)
        let resultToken = try #require(result.purchaseToken)
        for message in messages {
            let body = try #require(message.subscriptionNotification ?? message.notification["voidedPurchaseNotification"] as? [String: Any])
            #expect(body["purchaseToken"] as? String == resultToken)
        }
        #expect(harness.simulator.subscription(resultToken)?.state == state)
        await harness.close()
    }

    @Test func thePushIsAWrappedPubSubMessageCarryingTheDeveloperNotification() async throws {
        let harness = try GoogleHarness()
        let result = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                          currency: "USD")
        let received = try #require(harness.ingest.received.current.first)
        #expect(received.host == GoogleFixture.ingestHost && received.contentType == "application/json")
        #expect(received.userAgent?.hasPrefix("APIs-Google") == true)
        let message = try PushMessage(received.body)
        #expect(Set(message.envelope.keys) == ["message", "subscription"])
        #expect(message.envelope["subscription"] as? String == "projects/storesync-simulator/subscriptions/play-rtdn")
        #expect(Set(message.message.keys) == ["attributes", "data", "messageId", "message_id", "publishTime", "publish_time"])
        let messageId = try #require(message.messageId)
        #expect(message.message["message_id"] as? String == messageId && messageId.allSatisfy(\.isNumber))
        #expect(message.message["publishTime"] as? String == "2026-01-01T00:00:00.123Z")
        #expect(message.message["publish_time"] as? String == "2026-01-01T00:00:00.123Z")
        #expect((message.message["attributes"] as? [String: Any])?.isEmpty == true)

        #expect(message.notification["version"] as? String == "1.0")
        #expect(message.notification["packageName"] as? String == GoogleFixture.packageName)
        #expect(message.notification["eventTimeMillis"] as? String == String(milliseconds(GoogleFixture.start)))
        let notification = try #require(message.subscriptionNotification)
        #expect(notification["version"] as? String == "1.0" && notification["notificationType"] as? Int == 4)
        #expect(notification["purchaseToken"] as? String == result.purchaseToken)
        #expect(notification["subscriptionId"] as? String == GoogleFixture.monthly)
        #expect(result.pushes.first?.messageId == messageId)
        let encoded = try #require(message.message["data"] as? String)
        let data = try #require(Data(base64Encoded: encoded))
        #expect(result.pushes.first?.data == String(decoding: data, as: UTF8.self))
        await harness.close()
    }

    /// Google's order ids are unique across apps: two simulators writing to one database (benchmark runs) must not
    /// name the same charge, or the second's would be booked already.
    @Test func twoSimulatorsNameDifferentOrders() async throws {
        var orders: [String] = []
        for _ in 0..<2 {
            let harness = try GoogleHarness()
            let token = try await harness.purchase()
            let renewed = try await harness.simulator.renew(token, silent: true)
            orders.append(try #require(renewed.orderId))
            await harness.close()
        }
        #expect(orders[0] != orders[1])
        #expect(orders.allSatisfy { $0.wholeMatch(of: /GPA\.\d{4}-\d{4}-\d{4}-\d{5}\.\.0/) != nil }, "\(orders)")
    }

    @Test func aRefundPushesAVoidedPurchaseNotificationForTheOrder() async throws {
        let harness = try GoogleHarness()
        let token = try await harness.purchase()
        let renewed = try await harness.simulator.renew(token, silent: true)
        let refunded = try await harness.simulator.refund(token, revoke: false, source: .user, reason: .remorse)
        #expect(refunded.orderId == renewed.orderId)
        let voided = try #require(try harness.ingest.messages().first?.notification["voidedPurchaseNotification"] as? [String: Any])
        #expect(voided["purchaseToken"] as? String == token && voided["orderId"] as? String == renewed.orderId)
        #expect(voided["productType"] as? Int == 1 && voided["refundType"] as? Int == 1)
        #expect(harness.simulator.order(try #require(renewed.orderId))?.state == .refunded)

        let partial = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                           currency: "USD", silent: true)
        let partialToken = try #require(partial.purchaseToken)
        let partialRefund = try await harness.simulator.refund(partialToken, revoke: false, partialAmount: 300)
        let partialBody = try #require(try harness.ingest.messages().last?.notification["voidedPurchaseNotification"] as? [String: Any])
        #expect(partialBody["refundType"] as? Int == 2)
        #expect(harness.simulator.order(try #require(partialRefund.orderId))?.state == .partiallyRefunded)
        // The remainder completes the refund, which Google reports as full.
        _ = try await harness.simulator.refund(partialToken, revoke: false)
        let rest = try #require(try harness.ingest.messages().last?.notification["voidedPurchaseNotification"] as? [String: Any])
        #expect(rest["refundType"] as? Int == 1)
        #expect(harness.simulator.order(try #require(partialRefund.orderId))?.state == .refunded)
        await harness.close()
    }

    @Test func aTestNotificationCarriesOnlyItsVersion() async throws {
        let harness = try GoogleHarness(packages: [GoogleFixture.packageName, GoogleFixture.otherPackageName])
        let result = try await harness.simulator.sendTestNotification(packageName: GoogleFixture.otherPackageName)
        #expect(result.purchaseToken == nil && result.pushes.first?.kind == .test)
        let message = try #require(try harness.ingest.messages().first)
        #expect(message.notification["packageName"] as? String == GoogleFixture.otherPackageName)
        #expect((message.notification["testNotification"] as? [String: Any])?["version"] as? String == "1.0")
        #expect(message.subscriptionNotification == nil)
        await harness.close()
    }

    @Test func renewalsChargeNewOrdersAtThePeriodsEndAndMoveTheClock() async throws {
        let harness = try GoogleHarness()
        let token = try await harness.purchase()
        let purchaseOrder = try #require(harness.simulator.subscription(token)?.orderIds.first)
        let first = try await harness.simulator.renew(token)
        let second = try await harness.simulator.renew(token)
        #expect(first.orderId == purchaseOrder + "..0" && second.orderId == purchaseOrder + "..1")
        #expect(purchaseOrder.range(of: #"^GPA\.\d{4}-\d{4}-\d{4}-\d{5}$"#, options: .regularExpression) != nil)
        #expect(milliseconds(harness.simulator.now) == milliseconds(GoogleFixture.start) + 60 * GoogleFixture.day)
        let subscription = try #require(harness.simulator.subscription(token))
        #expect(subscription.orderIds == [purchaseOrder, purchaseOrder + "..0", purchaseOrder + "..1"])
        #expect(subscription.expiryTime == milliseconds(GoogleFixture.start) + 90 * GoogleFixture.day)
        await harness.close()
    }

    @Test func aLicenceTestersPurchaseRenewsFastAndAtMostSixTimes() async throws {
        let harness = try GoogleHarness()
        let token = try await harness.purchase(testPurchase: true)
        for _ in 0..<6 { try await harness.simulator.renew(token, silent: true) }
        #expect(milliseconds(harness.simulator.now) == milliseconds(GoogleFixture.start) + 6 * 300_000)
        #expect(await simulatorErrorCode { try await harness.simulator.renew(token) } == .invalidState)
        #expect(harness.simulator.subscription(token)?.tax == 0)
        await harness.close()
    }

    @Test func silentCommandsChangeStateAndPushNothing() async throws {
        let harness = try GoogleHarness()
        let token = try await harness.purchase(silent: true)
        let cancelled = try await harness.simulator.cancel(token, silent: true)
        #expect(cancelled.pushes.isEmpty && cancelled.subscriptionState == .canceled)
        #expect(harness.ingest.received.current.isEmpty && harness.simulator.pushes.isEmpty)
        let subscription = try await harness.subscriptionV2(token)
        #expect(subscription["subscriptionState"] as? String == "SUBSCRIPTION_STATE_CANCELED")
        await harness.close()
    }

    @Test func resendDeliversTheSameMessageAgain() async throws {
        let harness = try GoogleHarness()
        let result = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                          currency: "USD")
        let record = try await harness.simulator.resendLastPush(times: 3)
        #expect(record.messageId == result.pushes.first?.messageId && record.attempts.count == 4)
        let messages = try harness.ingest.messages()
        #expect(messages.count == 4 && Set(messages.compactMap(\.messageId)).count == 1)
        #expect(Set(harness.ingest.received.current.map { $0.body }).count == 1)
        await harness.close()
    }

    @Test("commands that do not fit the state are refused and change nothing", arguments: [
        ([Step.cancel], Step.renew), ([], .recover), ([], .resume), ([], .restart), ([], .expire), ([.cancel], .pause),
        ([.refund], .refund), ([.upgrade], .renew), ([.expireLongAgo], .expireLongAgo),
        ([.expireLongAgo], .refund),
    ])
    func refused(_ before: [Step], _ command: Step) async throws {
        let harness = try GoogleHarness()
        let token = try await harness.purchase()
        for step in before { _ = try await step.apply(harness.simulator, token, silent: true) }
        let state = harness.simulator.subscription(token)
        let clock = harness.simulator.now
        #expect(await simulatorErrorCode { _ = try await command.apply(harness.simulator, token, silent: false) } == .invalidState)
        #expect(harness.simulator.subscription(token) == state && harness.simulator.now == clock)
        #expect(harness.ingest.received.current.isEmpty)
        await harness.close()
    }

    @Test func badArgumentsAreRefused() async throws {
        let harness = try GoogleHarness(push: false, packages: [GoogleFixture.packageName, GoogleFixture.otherPackageName])
        let purchase = { (product: String, plan: String, price: Int64, tax: Int64, currency: String) in
            await simulatorErrorCode {
                _ = try await harness.simulator.purchase(packageName: GoogleFixture.packageName, productId: product, basePlanId: plan,
                                                         price: price, tax: tax, currency: currency)
            }
        }
        #expect(await purchase("", "monthly", 999, 0, "USD") == .invalidArgument)
        #expect(await purchase("p", "monthly", -1, 0, "USD") == .invalidArgument)
        #expect(await purchase("p", "monthly", 999, 1000, "USD") == .invalidArgument)
        #expect(await purchase("p", "monthly", 999, 0, "usd") == .invalidArgument)
        #expect(await purchase("p", "month ly", 999, 0, "USD") == .invalidArgument)
        #expect(await simulatorErrorCode { _ = try await harness.simulator.purchase(productId: "p", basePlanId: "b", price: 1, currency: "USD") }
                == .unknownApp)
        #expect(await simulatorErrorCode { _ = try await harness.simulator.renew("unknown") } == .notFound)
        await harness.close()
    }
}
