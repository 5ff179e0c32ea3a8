import Foundation
import Simulator
import Testing

/// A push's `messageId` is its receipt's key, which the database keeps up to 200 characters. An id that fits
/// is mirrored and deduplicated as usual; a longer one (no Pub/Sub id is that long) is refused at ingest (400) with
/// the reason — as the worker would refuse it — instead of failing its receipt's commit on every attempt until the
/// retries run out.
@Suite struct GoogleMessageIDTests {
    @Test(arguments: [1, 200])
    func anIDThatFitsIsMirroredAndDeduplicated(length: Int) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let bought = try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
                                                 obfuscatedAccountId: customer.token.uuidString, silent: true)
            let token = try #require(bought.purchaseToken)
            let messageID = String(repeating: "7", count: length)
            #expect(try await CraftedPlayPushes(pipeline).post(messageID: messageID, purchaseToken: token, copies: 2)
                    == [200, 200])
            try await pipeline.settle()
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.receiptOutcome(messageID) == "mirrored")
            #expect(try await pipeline.count("SELECT count(*) FROM invoices") == 1)
            #expect(pipeline.retriedJobs() == 0)
        }
    }

    @Test(arguments: [201, 256])
    func aLongerIDIsRefusedAtIngest(length: Int) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let bought = try await play.purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
                                                 silent: true)
            let messageID = String(repeating: "7", count: length)
            #expect(try await CraftedPlayPushes(pipeline).post(messageID: messageID,
                                                               purchaseToken: try #require(bought.purchaseToken)) == [400])
            try await pipeline.settle()
            #expect(try await pipeline.count("SELECT count(*) FROM jobs") == 0)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.count("SELECT count(*) FROM notification_receipts") == 0)
            #expect(play.requestCount(.subscriptionsV2) == 0)
        }
    }
}
