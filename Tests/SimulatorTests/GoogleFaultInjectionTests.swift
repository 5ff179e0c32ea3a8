import Foundation
import HTTP
import Simulator
import Testing

/// Injected failures: API 429 with `Retry-After`, 500, permission errors, latency; lost and duplicated pushes.
@Suite struct GoogleFaultInjectionTests {
    @Test func theNextRequestsAreRateLimitedWithRetryAfterThenServedAgain() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        try harness.simulator.rateLimitNextRequests(2, retryAfter: .milliseconds(2500))
        let path = "purchases/subscriptionsv2/tokens/\(token)"
        for _ in 0..<2 {
            let limited = try await harness.api("GET", path)
            #expect(limited.status == 429 && limited.header("retry-after") == "3")
            #expect(googleReason(limited) == "rateLimitExceeded")
            #expect(try googleError(limited)["status"] as? String == "RESOURCE_EXHAUSTED")
            #expect(HTTPRetry.classify(.success(limited)) == .retryable(after: .seconds(3)))
        }
        #expect(try await harness.api("GET", path).status == 200)
        #expect(harness.simulator.faults.rateLimitedRequests == 0)
        #expect(harness.simulator.requestCount(.subscriptionsV2) == 3)
        await harness.close()
    }

    @Test func theNextRequestsFailOrAreDeniedThenServedAgain() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let path = "purchases/subscriptionsv2/tokens/\(token)"
        try harness.simulator.failNextRequests(1)
        let failed = try await harness.api("GET", path)
        #expect(failed.status == 500 && googleReason(failed) == "backendError")
        try harness.simulator.denyPermissionForNextRequests(1)
        let denied = try await harness.api("GET", path)
        #expect(denied.status == 401 && googleReason(denied) == "permissionDenied")
        #expect(try await harness.api("GET", path).status == 200)
        await harness.close()
    }

    @Test func faultsApplyOnlyToAuthenticatedRequests() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        try harness.simulator.failNextRequests(1)
        let refused = try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)", authorization: "Bearer ya29.unknown")
        #expect(refused.status == 401)
        #expect(harness.simulator.faults.failedRequests == 1)
        await harness.close()
    }

    @Test func latencyDelaysAnswersWithoutHoldingOthersBack() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let accessToken = try await harness.accessToken()
        // Long against the spread of the requests' arrival on a loaded machine (and short of the client's 10 s
        // timeout), so the first answer cannot come out before the last request is in.
        try harness.simulator.setLatency(.seconds(6))
        let answered = Locked(0)
        try await withThrowingTaskGroup(of: Duration.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    let started = ContinuousClock.now
                    let response = try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)",
                                                         authorization: "Bearer \(accessToken)")
                    answered.withLock { $0 += 1 }
                    #expect(response.status == 200)
                    return ContinuousClock.now - started
                }
            }
            try await waitUntil("six requests in the simulator", within: .seconds(5)) {
                harness.simulator.requestCount(.subscriptionsV2) == 6
            }
            #expect(answered.current == 0)
            for try await elapsed in group { #expect(elapsed >= .seconds(6)) }
        }
        await harness.close()
    }

    @Test func aDroppedPushIsNeverDeliveredAndTheNextOneIs() async throws {
        let harness = try GoogleHarness()
        try harness.simulator.dropNextPushes(1)
        let dropped = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                           currency: "USD")
        #expect(dropped.pushes.first?.attempts.map(\.delivery.outcome) == [.dropped])
        let renewed = try await harness.simulator.renew(try #require(dropped.purchaseToken))
        #expect(renewed.pushes.first?.acknowledged == true)
        #expect(try harness.ingest.messages().map(\.notificationType) == [2])
        await harness.close()
    }

    @Test func aDuplicatedPushArrivesSeveralTimesWithOneMessageId() async throws {
        let harness = try GoogleHarness()
        try harness.simulator.duplicateNextPush(copies: 4)
        let result = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                          currency: "USD")
        #expect(result.pushes.first?.attempts.count == 5)
        let messages = try harness.ingest.messages()
        #expect(messages.count == 5 && Set(messages.compactMap(\.messageId)).count == 1)
        #expect(harness.simulator.faults.duplicatedPushCopies == 0)
        try await harness.simulator.renew(try #require(result.purchaseToken))
        #expect(harness.ingest.received.current.count == 6)
        await harness.close()
    }

    @Test func badFaultSettingsAreRefused() async throws {
        let harness = try GoogleHarness(push: false)
        #expect(await simulatorErrorCode { try harness.simulator.failNextRequests(-1) } == .invalidArgument)
        #expect(await simulatorErrorCode { try harness.simulator.setLatency(.seconds(3600)) } == .invalidArgument)
        #expect(await simulatorErrorCode { try harness.simulator.duplicateNextPush(copies: 101) } == .invalidArgument)
        var settings = PlayFaultSettings()
        settings.badPushTokens = 1
        #expect(await simulatorErrorCode { try harness.simulator.setFaults(settings) } == .invalidArgument)
        #expect(harness.simulator.faults == PlayFaultSettings())
        await harness.close()
    }
}
