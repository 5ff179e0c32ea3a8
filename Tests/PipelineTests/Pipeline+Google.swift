import Foundation
import Simulator
import Testing

/// What the Google pipeline tests start from: a pipeline with a Production Play connection, a monthly purchase
/// on the Play simulator, and the lineage the mirror filed a token under.
extension Pipeline.Options {
    /// A pipeline whose Google connection is Production, like its Apple one.
    static var googleProduction: Pipeline.Options {
        var options = Pipeline.Options()
        options.googleEnvironment = .production
        return options
    }
}

extension Pipeline {
    /// A purchase of `pro.monthly` (9.99 USD) on the Play simulator, tagged with `token` when given.
    func buyOnPlay(token: UUID?, testPurchase: Bool = false, silent: Bool = false) async throws -> PlayScenarioResult {
        try await #require(play).purchase(productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
                                          obfuscatedAccountId: token?.uuidString, testPurchase: testPurchase, silent: silent)
    }

    /// A customer's `pro.monthly` purchase on the Play simulator, tagged with their account token and mirrored.
    func mirroredPlayPurchase() async throws -> (token: String, orderID: String, lineage: String) {
        let bought = try await buyOnPlay(token: try await customer().token)
        let token = try #require(bought.purchaseToken)
        try await settle()
        return (token, try #require(bought.orderId), try await lineage(ofPlayToken: token))
    }

    /// The lineage the mirror filed Play `token` under; fails the test, naming the dead letters, when it did not.
    func lineage(ofPlayToken token: String?) async throws -> String {
        let rows = try await database.pool.query("""
            SELECT p.lineage FROM purchase_tokens t JOIN store_purchases p ON p.id = t.purchase_id WHERE t.purchase_token = $1
            """, [try #require(token)])
        let reasons = try await deadLetterReasons()
        return try #require(rows.first, "token \(token ?? "") was not mirrored; dead letters: \(reasons)").decode(0)
    }
}
