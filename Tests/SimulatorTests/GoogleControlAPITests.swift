import Foundation
import HTTP
import Simulator
import Testing

/// The HTTP control API under `/simulator/google/` drives the same commands as the Swift API.
@Suite struct GoogleControlAPITests {
    @Test func scenarioCommandsOverHTTPChangeStateAndPush() async throws {
        let harness = try GoogleHarness()
        let purchased = try await harness.control("POST", "/simulator/google/scenario/purchase", """
            {"productId":"premium_monthly","basePlanId":"monthly","price":999,"tax":159,"currency":"USD",\
            "obfuscatedAccountId":"acct-1","testPurchase":true}
            """)
        #expect(purchased.status == 200)
        let result = try JSONDecoder().decode(PlayScenarioResult.self, from: purchased.body)
        let token = try #require(result.purchaseToken)
        #expect(result.subscriptionState == .active && result.pushes.first?.notificationType == 4)
        #expect(harness.simulator.subscription(token)?.testPurchase == true)

        let paused = try await harness.control("POST", "/simulator/google/scenario/pause",
                                               #"{"purchaseToken":"\#(token)","pauseMilliseconds":60000,"silent":true}"#)
        #expect(try JSONDecoder().decode(PlayScenarioResult.self, from: paused.body).pushes.isEmpty)
        let resumed = try await harness.control("POST", "/simulator/google/scenario/resume", #"{"purchaseToken":"\#(token)"}"#)
        #expect(try JSONDecoder().decode(PlayScenarioResult.self, from: resumed.body).pushes.first?.notificationType == 1)
        let refunded = try await harness.control("POST", "/simulator/google/scenario/refund",
                                                 #"{"purchaseToken":"\#(token)","revoke":false,"voidedSource":0,"voidedReason":1}"#)
        #expect(try JSONDecoder().decode(PlayScenarioResult.self, from: refunded.body).pushes.first?.kind == .voidedPurchase)
        #expect(harness.simulator.voidedPurchases.first?.reason == .remorse)
        let test = try await harness.control("POST", "/simulator/google/scenario/test-notification", "{}")
        #expect(try JSONDecoder().decode(PlayScenarioResult.self, from: test.body).pushes.first?.kind == .test)
        #expect(harness.ingest.received.current.count == 4)

        let described = try jsonObject(try await harness.control("GET", "/simulator/google/subscriptions/\(token)"))
        #expect((described["subscription"] as? [String: Any])?["subscriptionState"] as? String == "SUBSCRIPTION_STATE_ACTIVE")
        #expect((described["orders"] as? [Any])?.count == 2)

        let pushes = try JSONDecoder().decode([PlayPushRecord].self,
                                              from: try await harness.control("GET", "/simulator/google/pushes").body)
        #expect(pushes.map(\.kind) == [.subscription, .subscription, .voidedPurchase, .test])
        let resent = try await harness.control("POST", "/simulator/google/pushes/resend", #"{"times":2}"#)
        #expect(try JSONDecoder().decode(PlayPushRecord.self, from: resent.body).attempts.count == 3)
        await harness.close()
    }

    @Test("refused commands answer with the reason", arguments: [
        ("/simulator/google/scenario/renew", #"{"purchaseToken":"unknown"}"#, 404),
        ("/simulator/google/scenario/renew", "{}", 400),
        ("/simulator/google/scenario/purchase", #"{"productId":"p","basePlanId":"b","currency":"USD"}"#, 400),
        ("/simulator/google/scenario/purchase", #"{"productId":"p","basePlanId":"b","price":"cheap","currency":"USD"}"#, 400),
        ("/simulator/google/scenario/teleport", "{}", 404),
        ("/simulator/google/pushes/resend", #"{"times":1}"#, 409),
        ("/simulator/google/clock", #"{"advanceMilliseconds":-1}"#, 400),
        ("/simulator/google/clock", #"{"advanceMilliseconds":9223372036854775807}"#, 400),
        ("/simulator/google/clock", #"{"to":9223372036854775807}"#, 400),
        ("/simulator/google/clock", #"{"to":-9223372036854775808}"#, 400),
        ("/simulator/google/faults", #"{"failedRequests":-2}"#, 400),
        ("/simulator/google/faults", #"{"badPushToken":"polite"}"#, 400),
    ])
    func refusedCommands(_ path: String, _ body: String, _ status: Int) async throws {
        let harness = try GoogleHarness(push: false)
        let response = try await harness.control("POST", path, body)
        #expect(response.status == status)
        #expect(try jsonObject(response)["error"] is String)
        await harness.close()
    }

    @Test func clockFaultsCountersKeysAndAcknowledgementsAreReachable() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let clock = try jsonObject(try await harness.control("POST", "/simulator/google/clock", #"{"advanceMilliseconds":90000}"#))
        #expect((clock["now"] as? NSNumber)?.int64Value == milliseconds(GoogleFixture.start) + 90_000)
        #expect(clock["time"] as? String == "2026-01-01T00:01:30.123Z")

        let faults = try await harness.control("POST", "/simulator/google/faults",
                                               #"{"failedRequests":1,"badPushTokens":2,"badPushToken":"expired"}"#)
        let settings = try JSONDecoder().decode(PlayFaultSettings.self, from: faults.body)
        #expect(settings.failedRequests == 1 && settings.badPushTokens == 2 && settings.badPushToken == .expired)
        #expect(try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)").status == 500)

        let path = "purchases/subscriptions/\(GoogleFixture.monthly)/tokens/\(token):acknowledge"
        #expect(try await harness.api("POST", path).status == 204)
        let acknowledgements = try JSONDecoder().decode([PlayAcknowledgement].self,
                                                        from: try await harness.control("GET", "/simulator/google/acknowledgements").body)
        #expect(acknowledgements.map(\.purchaseToken) == [token])

        let counts = try jsonObject(try await harness.control("GET", "/simulator/google/requests"))
        #expect(counts[PlayEndpoint.subscriptionsV2.rawValue] as? Int == 1)
        #expect(counts[PlayEndpoint.acknowledge.rawValue] as? Int == 1)
        #expect(counts[PlayEndpoint.token.rawValue] as? Int == 2)

        let rotated = try jsonObject(try await harness.control("POST", "/simulator/google/keys/rotate", #"{"keepPrevious":false}"#))
        #expect(rotated["keyIds"] as? [String] == harness.simulator.pushKeyIDs)
        #expect(harness.simulator.pushKeyIDs.count == 1)

        let accessToken = try await harness.accessToken()
        #expect(try await harness.control("POST", "/simulator/google/access-tokens/expire").status == 200)
        #expect(try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)", authorization: "Bearer \(accessToken)").status == 401)
        await harness.close()
    }
}
