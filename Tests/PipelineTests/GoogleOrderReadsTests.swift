import Simulator
import Testing
import TestSupport

/// How a Google notification's job reads the charges it books: the orders it needs in one `orders.batchGet`
/// of the Orders quota bucket, read again in halves only when a guessed renewal number has no order.
@Suite struct GoogleOrderReadsTests {
    /// Two renewals whose notifications were lost, then a third that arrives: its job books all three from one
    /// batch read.
    @Test func renewalsWhoseNotificationsWereLostAreReadInOneBatch() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let (play, token, orderID) = try await Self.bought(pipeline)
            try await play.renew(token, silent: true)
            try await play.renew(token, silent: true)
            try await play.renew(token)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: token)
            #expect(try await pipeline.invoices(lineage).map(\.transactionID).sorted()
                == [orderID, orderID + "..0", orderID + "..1", orderID + "..2"])
            #expect(play.requestCounts[.ordersBatchGet] == 1)
            #expect(play.requestCounts[.order] == 1, "only the purchase's own order was read alone")
            #expect(pipeline.retriedJobs() == 0)
        }
    }

    /// A renewal number Google never charged fails the batch that guessed it; its halves are then read again
    /// down to the missing one, which is skipped, and every real charge is booked once.
    @Test func aRenewalNumberNeverChargedIsSkipped() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let (play, token, orderID) = try await Self.bought(pipeline)
            try await play.renew(token, silent: true)
            try await play.renew(token, skippingOrderNumber: true)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: token)
            #expect(try await pipeline.invoices(lineage).map(\.transactionID).sorted()
                == [orderID, orderID + "..0", orderID + "..2"])
            #expect(play.requestCounts[.ordersBatchGet] == 2, "the three, then the half [..1, ..2] holding the unknown one")
            #expect(play.requestCounts[.order] == 4, "the purchase's, then ..0, ..1 (unknown) and ..2 alone")
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
            #expect(pipeline.retriedJobs() == 0)
        }
    }

    /// A purchase pushed and mirrored: the simulator, its token and its order.
    static func bought(_ pipeline: Pipeline) async throws -> (PlaySimulator, String, String) {
        let play = try #require(pipeline.play)
        let bought = try await pipeline.buyOnPlay(token: try await pipeline.customer().token)
        try await pipeline.settle()
        return (play, try #require(bought.purchaseToken), try #require(bought.orderId))
    }
}
