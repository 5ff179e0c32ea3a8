import Foundation
import Mirror
import StoreModel
import TestSupport
import Testing

/// Google purchase-token chains: every token of a lineage leads to it, and replaced tokens say by what.
@Suite struct PurchaseTokensTests {
    @Test func anUpgradeChainIsOneLineageWithItsOldTokensMarkedReplaced() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, store: .google)
            try await fixture.map(AccountFixture.product, basePlanID: "monthly", to: fixture.planPriceID)
            var first = Fake.snapshot(lineage: "token-a", store: .google, basePlanID: "monthly", token: nil, asOfDay: 0)
            first.purchaseToken = "token-a"
            _ = try await fixture.apply(first)

            var upgraded = Fake.snapshot(lineage: "token-a", store: .google, basePlanID: "monthly", token: nil, asOfDay: 1,
                                         reference: "notification-2", event: "SUBSCRIPTION_PURCHASED")
            upgraded.purchaseToken = "token-c"
            upgraded.replacedTokens = ["token-a", "token-b"]
            _ = try await fixture.apply(upgraded)
            _ = try await fixture.apply(upgraded)

            let connectionID = fixture.connection.id
            for token in ["token-a", "token-b", "token-c"] {
                let lineage = try await database.pool.transaction { db in
                    try PurchaseTokens.lineage(of: token, connectionID: connectionID, on: db)
                }
                #expect(lineage == "token-a")
            }
            let replaced = try await fixture.rows("SELECT purchase_token, replaced_by FROM purchase_tokens ORDER BY purchase_token")
                .map { [try $0.decode(0, as: String.self), try $0.decodeOptional(1, as: String.self) ?? "-"] }
            #expect(replaced == [["token-a", "token-b"], ["token-b", "token-c"], ["token-c", "-"]])
            #expect(try await fixture.count("SELECT count(*) FROM store_purchases") == 1)
            #expect(try await fixture.count("SELECT count(*) FROM purchase_events WHERE kind = 'token_replaced'") == 2)
            // The replaced token's own (later fetched) state never speaks for the lineage again.
            var late = Fake.snapshot(lineage: "token-a", store: .google, basePlanID: "monthly", state: .expired, token: nil,
                                     asOfDay: 5, reference: "notification-3", event: "SUBSCRIPTION_EXPIRED")
            late.purchaseToken = "token-a"
            let outcome = try await fixture.apply(late)
            #expect(!outcome.applied && outcome.state == .active)

            let unknown = try await database.pool.transaction { db in
                try PurchaseTokens.lineage(of: "token-z", connectionID: connectionID, on: db)
            }
            #expect(unknown == nil)
        }
    }

    /// Two notifications of one upgrade processed together: the old token is fetched after the new one but
    /// committed first. The successor's state must win although its snapshot is older.
    @Test func aSuccessorTokenSupersedesItsPredecessorsStateWhateverTheFetchOrder() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, store: .google)
            try await fixture.map(AccountFixture.product, basePlanID: "monthly", to: fixture.planPriceID)
            var old = Fake.snapshot(lineage: "token-a", store: .google, basePlanID: "monthly", state: .expired, token: nil,
                                    asOfDay: 5)
            old.purchaseToken = "token-a"
            #expect(try await fixture.apply(old).state == .expired)

            var successor = Fake.snapshot(lineage: "token-a", store: .google, basePlanID: "monthly", state: .active,
                                          token: nil, asOfDay: 1, reference: "notification-2", event: "SUBSCRIPTION_PURCHASED")
            successor.purchaseToken = "token-b"
            successor.replacedTokens = ["token-a"]
            let outcome = try await fixture.apply(successor)
            #expect(outcome.applied && outcome.state == .active)

            // Once recorded, the chain decides as before: the old token's later fetch is stale.
            var later = Fake.snapshot(lineage: "token-a", store: .google, basePlanID: "monthly", state: .expired, token: nil,
                                      asOfDay: 6, reference: "notification-3", event: "SUBSCRIPTION_EXPIRED")
            later.purchaseToken = "token-a"
            #expect(try await !fixture.apply(later).applied)
        }
    }
}
