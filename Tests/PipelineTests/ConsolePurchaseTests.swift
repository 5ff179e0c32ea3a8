import Foundation
import HTTP
import Postgres
import Simulator
import TestSupport
import Testing

/// The console's purchase search and story over real HTTP, on purchases the pipeline mirrored: whatever on-call
/// was handed finds the purchase, and its page tells the story the mirror holds — state, charges to the cent,
/// refunds, the timeline newest first, Google's tokens.
@Suite struct ConsolePurchaseTests {
    /// An Apple subscription bought, renewed and refunded: found by its lineage, either charge's transaction, its
    /// customer and its account token; its page shows all of it.
    @Test func anAppleSubscriptionIsFoundByWhatOnCallHasAndItsStoryIsWhole() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let bought = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                appAccountToken: customer.token)
            let lineage = bought.originalTransactionId
            let renewed = try await pipeline.simulator.renew(lineage)
            try await pipeline.simulator.refund(lineage)
            try await pipeline.settle()
            let purchaseID = try await Self.purchaseID(lineage, pipeline.database)
            try await ConsoleHarness.with(pipeline.database) { console in
                for text in [lineage, bought.transactionId, renewed.transactionId, customer.id, customer.token.uuidString,
                             customer.token.uuidString.lowercased(), "  \(lineage)  "] {
                    let found = try await console.get(Self.search(text))
                    #expect(found.status == 303, "searching \(text): \(found.text.prefix(2000))")
                    #expect(found.header("location") == "/purchases/\(purchaseID)", "searching \(text)")
                }

                let story = try await console.get("/purchases/\(purchaseID)")
                #expect(story.status == 200)
                let state: String = try await pipeline.database.pool.query(
                    "SELECT store_state FROM store_purchases WHERE id = $1", [purchaseID])[0].decode(0)
                #expect(state == "revoked")
                #expect(story.text.contains(#"<span class="tag bad">revoked</span>"#))
                #expect(story.text.contains(#"<span class="mono">\#(lineage)</span>"#))
                #expect(story.text.contains("<a href=\"/purchases?q=\(customer.id)\">\(customer.id)</a>"))
                #expect(story.text.contains("<dt>Account token</dt><dd>\(customer.token.uuidString.lowercased())</dd>")
                        || story.text.contains("<dt>Account token</dt><dd>\(customer.token.uuidString)</dd>"))
                // Both charges, newest first, to the cent; the refunded one says so.
                let charges = story.text.matches(of: #/<td><span class="mono">(\d+)</span></td><td>pro\.monthly</td><td>9\.99 USD</td>/#)
                    .map { String($0.output.1) }
                #expect(charges == [renewed.transactionId, bought.transactionId])
                let refund: (kind: String, amount: Int64) = try await pipeline.database.pool.query(
                    "SELECT kind, amount_minor FROM refunds").first.map { (try $0.decode(0), try $0.decode(1)) } ?? ("", 0)
                #expect(refund.amount == 999)
                #expect(story.text.contains("9.99 USD \(refund.kind) "), "\(story.text.prefix(6000))")
                try await Self.expectTimelineNewestFirst(story, purchaseID: purchaseID, database: pipeline.database)
            }
        }
    }

    /// A customer with two purchases: a search by the customer lists both (newest first), and opens neither.
    @Test func aSearchWithSeveralMatchesListsThemAll() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let first = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                               appAccountToken: customer.token).originalTransactionId
            let second = try await pipeline.simulator.subscribe(productId: "pro.yearly", price: 99_990, currency: "USD",
                                                                appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            let ids = [try await Self.purchaseID(second, pipeline.database), try await Self.purchaseID(first, pipeline.database)]
            try await ConsoleHarness.with(pipeline.database) { console in
                let found = try await console.get("/purchases?q=\(customer.id)")
                #expect(found.status == 200)
                let listed = found.text.matches(of: #/<td><a href="/purchases/(\d+)">/#).compactMap { Int64($0.output.1) }
                #expect(listed == ids.sorted(by: >))
                #expect(found.text.contains("<td>customer</td>"))
            }
        }
    }

    @Test func anUnknownSearchSaysNoPurchaseAndAnUnknownIDIsA404() async throws {
        try await TestDatabase.with { database in
            try await ConsoleHarness.with(database) { console in
                for text in ["1000000000000001", "no such thing", UUID().uuidString, #"<b>"quoted"</b>"#] {
                    let answer = try await console.get(Self.search(text))
                    #expect(answer.status == 200)
                    #expect(answer.text.contains("No purchase is known by that."))
                    #expect(answer.text.contains(#"<input name="q" value="\#(htmlEscaped(text))""#))
                }
                let empty = try await console.get("/purchases")
                #expect(empty.status == 200 && !empty.text.contains("No purchase is known by that."))
                for path in ["/purchases/424242", "/purchases/abc", "/purchases/"] {
                    let answer = try await console.get(path)
                    #expect(answer.status == 404, "\(path)")
                    #expect(answer.text.contains("<h1>Not found</h1>"))
                }
            }
        }
    }

    /// A Play subscription renewed once and then upgraded: found by either purchase token and either order id, and
    /// its page lists both tokens, the newer one replacing the first.
    @Test func aGoogleSubscriptionIsFoundByItsTokensAndOrdersAndShowsThem() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let (token, orderID, lineage) = try await pipeline.mirroredPlayPurchase()
            let renewal = try #require(try await play.renew(token).orderId)
            let upgraded = try #require(try await play.upgrade(token, to: "pro.yearly", basePlanId: "yearly", price: 9_999)
                .purchaseToken)
            try await pipeline.settle()
            let purchaseID = try await Self.purchaseID(lineage, pipeline.database)
            try await ConsoleHarness.with(pipeline.database) { console in
                for text in [token, upgraded, orderID, renewal] {
                    let found = try await console.get(Self.search(text))
                    #expect(found.status == 303, "searching \(text): \(found.text.prefix(2000))")
                    #expect(found.header("location") == "/purchases/\(purchaseID)", "searching \(text)")
                }
                let story = try await console.get("/purchases/\(purchaseID)")
                #expect(story.status == 200)
                #expect(story.text.contains("<h2>Purchase tokens</h2>"))
                #expect(story.text.contains(token) && story.text.contains(upgraded))
                for order in [orderID, renewal] {
                    #expect(story.text.contains(#"<td><span class="mono">\#(order)</span></td><td>pro.monthly</td><td>9.99 USD</td>"#),
                            "order \(order)")
                }
                #expect(story.text.contains("99.99 USD"))
                try await Self.expectTimelineNewestFirst(story, purchaseID: purchaseID, database: pipeline.database)
            }
        }
    }

    // MARK: Support

    static func purchaseID(_ lineage: String, _ database: TestDatabase) async throws -> Int64 {
        try await database.pool.query("SELECT id FROM store_purchases WHERE lineage = $1", [lineage])[0].decode(0)
    }

    /// The search page's URL for `text`, encoded as the search form sends it.
    static func search(_ text: String) -> String {
        "/purchases?" + PercentEncoding.form([("q", text)])
    }

    /// The page's timeline is the purchase's events, newest first.
    static func expectTimelineNewestFirst(_ story: ConsoleHarness.Answer, purchaseID: Int64, database: TestDatabase) async throws {
        let kinds = try await database.pool.query("SELECT kind FROM purchase_events WHERE purchase_id = $1 ORDER BY id DESC",
                                                  [purchaseID]).map { try $0.decode(0, as: String.self) }
        #expect(kinds.count >= 3)
        let shown = story.text.matches(of: #/<span class="what">([^<]*)</span>/#).map { String($0.output.1) }
        #expect(shown == kinds.map { $0.replacingOccurrences(of: "_", with: " ") })
    }
}
