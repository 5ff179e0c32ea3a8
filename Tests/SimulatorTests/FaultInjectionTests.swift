import Foundation
import HTTP
import Simulator
import Testing

/// Injected failures: rate limiting with `Retry-After`, internal errors, latency, lost notifications.
@Suite struct FaultInjectionTests {
    @Test func theNextRequestsAreRateLimitedWithApplesRetryAfterThenServedAgain() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        try harness.simulator.rateLimitNextRequests(2, retryAfter: .seconds(5))

        for _ in 0..<2 {
            let before = milliseconds(Date())
            let limited = try await harness.send("GET", "/inApps/v1/subscriptions/\(id)")
            let after = milliseconds(Date())
            #expect(limited.status == 429)
            #expect(String(decoding: limited.body, as: UTF8.self) == #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
            // Apple's documented form: the UNIX time in milliseconds when requests may resume.
            let retryAt = try #require(limited.header("retry-after").flatMap { Int64($0) })
            #expect((before + 5000...after + 5000).contains(retryAt))
        }
        #expect(try await harness.send("GET", "/inApps/v1/subscriptions/\(id)").status == 200)
        #expect(harness.simulator.faults.rateLimitedRequests == 0)
        await harness.close()
    }

    @Test func retryAfterCanBeGivenInSeconds() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        try harness.simulator.rateLimitNextRequests(1, retryAfter: .milliseconds(2500), format: .seconds)
        let limited = try await harness.send("GET", "/inApps/v2/history/\(id)")
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") == "3")
        #expect(HTTPRetry.classify(.success(limited)) == .retryable(after: .seconds(3)))
        await harness.close()
    }

    @Test func theNextRequestsFailWithGeneralInternalError() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        try harness.simulator.failNextRequests(1)
        let failed = try await harness.send("GET", "/inApps/v2/history/\(id)")
        #expect(failed.status == 500)
        #expect(String(decoding: failed.body, as: UTF8.self) == #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#)
        #expect(try await harness.send("GET", "/inApps/v2/history/\(id)").status == 200)
        await harness.close()
    }

    @Test func faultsApplyOnlyToAuthenticatedRequests() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        try harness.simulator.failNextRequests(1)
        let unauthenticated = try await harness.send("GET", "/inApps/v1/subscriptions/\(id)", authorization: "Bearer x.y.z")
        #expect(unauthenticated.status == 401)
        #expect(harness.simulator.faults.failedRequests == 1)
        await harness.close()
    }

    @Test func latencyDelaysAnswersWithoutHoldingOthersBack() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        // Long against the spread of the requests' arrival on a loaded machine (and short of the client's 10 s
        // timeout), so the first answer cannot come out before the last request is in.
        try harness.simulator.setLatency(.seconds(6))
        let answered = Locked(0)
        try await withThrowingTaskGroup(of: Duration.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let started = ContinuousClock.now
                    let response = try await harness.send("GET", "/inApps/v1/subscriptions/\(id)")
                    answered.withLock { $0 += 1 }
                    #expect(response.status == 200)
                    return ContinuousClock.now - started
                }
            }
            // All eight are waiting inside the simulator before the first is answered: the delay holds no thread.
            try await waitUntil("eight requests in the simulator", within: .seconds(5)) {
                harness.simulator.requestCount(.subscriptionStatuses) == 8
            }
            #expect(answered.current == 0)
            for try await elapsed in group { #expect(elapsed >= .seconds(6)) }
        }
        await harness.close()
    }

    @Test func aDroppedNotificationIsNotSentAndTheNextOneIs() async throws {
        let harness = try Harness()
        try harness.simulator.dropNextNotifications(1)
        let dropped = try await harness.simulator.subscribe(productId: Fixture.monthly, price: 9990, currency: "USD")
        #expect(dropped.notification?.delivery.outcome == .dropped)
        #expect(harness.ingest.received.current.isEmpty)

        let delivered = try await harness.simulator.renew(dropped.originalTransactionId)
        #expect(delivered.notification?.delivery.httpStatus == 200)
        let received = try harness.ingest.signedPayloads()
        #expect(received == [try #require(delivered.notification?.signedPayload)])
        await harness.close()
    }

    @Test func badFaultSettingsAreRefused() async throws {
        let harness = try Harness(notify: false)
        #expect(await simulatorErrorCode { try harness.simulator.failNextRequests(-1) } == .invalidArgument)
        #expect(await simulatorErrorCode { try harness.simulator.setLatency(.seconds(3600)) } == .invalidArgument)
        #expect(harness.simulator.faults == FaultSettings())
        await harness.close()
    }
}
