import Foundation
import HTTP
import Simulator
import Testing

/// Pub/Sub semantics: any answer but 102, 200, 201, 202 or 204 (or none) is a negative acknowledgement, and the
/// same message is delivered again with backoff until acknowledged or out of attempts.
@Suite struct GoogleRedeliveryTests {
    @Test func aRefusedPushIsRedeliveredWithTheSameMessageIdUntilAcknowledged() async throws {
        let harness = try GoogleHarness()
        harness.ingest.statuses.withLock { $0 = [500, 503, 204] }
        let result = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                          currency: "USD")
        let messageId = try #require(result.pushes.first?.messageId)
        #expect(result.pushes.first?.attempts.map(\.delivery.httpStatus) == [500])
        #expect(result.pushes.first?.acknowledged == false)

        try await waitUntil("the push to be acknowledged", within: .seconds(10)) {
            harness.simulator.push(messageId)?.acknowledged == true
        }
        let record = try #require(harness.simulator.push(messageId))
        #expect(record.attempts.map(\.delivery.httpStatus) == [500, 503, 204])
        #expect(record.attempts.map(\.number) == [1, 2, 3] && !record.abandoned)
        let messages = try harness.ingest.messages()
        #expect(messages.map(\.messageId) == [messageId, messageId, messageId])
        #expect(Set(messages.map { $0.message["publishTime"] as? String }).count == 1)
        // Each delivery carries a token of its own, and each verifies.
        let verifier = harness.verifier()
        for received in harness.ingest.received.current { _ = try await verifier.verify(authorization: try #require(received.authorization)) }
        await harness.close()
    }

    @Test func redeliveryStopsAfterTheConfiguredAttempts() async throws {
        let harness = try GoogleHarness()
        harness.ingest.statuses.withLock { $0 = [401] }
        let result = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                          currency: "USD")
        let messageId = try #require(result.pushes.first?.messageId)
        try await waitUntil("redelivery to give up", within: .seconds(10)) { harness.simulator.push(messageId)?.abandoned == true }
        let record = try #require(harness.simulator.push(messageId))
        #expect(record.attempts.count == GoogleFixture.fastRetry.maxAttempts && !record.acknowledged)
        #expect(harness.ingest.received.current.count == GoogleFixture.fastRetry.maxAttempts)
        await harness.close()
    }

    @Test("acknowledging and refusing statuses", arguments: [
        (200, true), (201, true), (202, true), (204, true), (203, false), (301, false), (400, false), (404, false), (429, false),
        (500, false),
    ])
    func acknowledgement(_ status: Int, _ acknowledges: Bool) async throws {
        let harness = try GoogleHarness(retry: PushRetryPolicy(minimumBackoff: .zero, maximumBackoff: .zero, maxAttempts: 1))
        harness.ingest.statuses.withLock { $0 = [status] }
        let result = try await harness.simulator.sendTestNotification(packageName: GoogleFixture.packageName)
        let record = try #require(result.pushes.first)
        #expect(record.acknowledged == acknowledges)
        #expect(record.abandoned == !acknowledges)
        await harness.close()
    }

    @Test func anUnreachableEndpointCountsAsNoAnswerAndIsRedelivered() async throws {
        let ingest = try PushRecorder()
        let url = ingest.url
        await ingest.server.stop(grace: .seconds(1))
        let harness = try GoogleHarness(retry: PushRetryPolicy(minimumBackoff: .milliseconds(5), maximumBackoff: .milliseconds(5),
                                                               maxAttempts: 2)) { configuration in
            configuration.push?.url = url
            configuration.push?.timeout = .seconds(2)
        }
        let result = try await harness.simulator.sendTestNotification(packageName: GoogleFixture.packageName)
        let messageId = try #require(result.pushes.first?.messageId)
        #expect(result.pushes.first?.attempts.first?.delivery.outcome == .failed)
        try await waitUntil("redelivery to give up", within: .seconds(10)) { harness.simulator.push(messageId)?.abandoned == true }
        #expect(harness.simulator.push(messageId)?.attempts.count == 2)
        await harness.close()
    }

    @Test func withoutATargetPushesAreOnlyRecorded() async throws {
        let harness = try GoogleHarness(push: false)
        let result = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                          currency: "USD")
        #expect(result.pushes.first?.attempts.map(\.delivery.outcome) == [.notSent])
        #expect(harness.simulator.pushes.count == 1 && harness.simulator.pushes.first?.abandoned == false)
        await harness.close()
    }
}
