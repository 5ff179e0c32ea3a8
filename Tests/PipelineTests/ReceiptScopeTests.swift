import Foundation
import GooglePlay
import Queue
import Simulator
import Sync
import TestSupport
import Testing

/// A Pub/Sub messageId is unique only within its topic, and StoreSync receives many tenants' topics: Google
/// receipts are scoped by account and subscription, so two subscriptions' pushes sharing an id are two
/// notifications, and only a redelivery of the same subscription's is a duplicate. Apple's are unscoped.
@Suite struct ReceiptScopeTests {
    @Test(arguments: [
        (42, "projects/p/subscriptions/play-rtdn", "42 projects/p/subscriptions/play-rtdn"),
        (43, "projects/p/subscriptions/play-rtdn", "43 projects/p/subscriptions/play-rtdn"),
        (42, nil, "42 package com.example.app"),
        (42, "", "42 package com.example.app"),
    ] as [(Int64, String?, String)])
    func googleScope(accountID: Int64, subscription: String?, scope: String) {
        #expect(ReceiptScope.google(accountID: accountID, subscription: subscription, packageName: "com.example.app") == scope)
    }

    /// The longest scope either form can make (`PubSubPush` bounds the subscription, `DeveloperNotification`
    /// the package) must fit the receipt, or its notification could never commit and would retry until it
    /// dead-lettered.
    @Test func theLongestScopesFitTheReceipt() async throws {
        let longest = [
            ReceiptScope.google(accountID: .min, subscription: String(repeating: "s", count: PubSubPush.maxSubscriptionLength),
                                packageName: "com.example.app"),
            ReceiptScope.google(accountID: .min, subscription: nil, packageName: String(repeating: "p", count: 255)),
        ]
        try await TestDatabase.with { database in
            for (index, scope) in longest.enumerated() {
                let recorded = try await database.recordReceipt(store: "google", scope: scope, messageID: "1", jobID: Int64(index),
                                                                outcome: "mirrored")
                #expect(recorded, "a scope of \(scope.utf8.count) bytes")
            }
        }
    }

    @Test func oneMessageIDFromTwoSubscriptionsIsTwoNotificationsAndARedeliveryIsADuplicate() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let bought = try await pipeline.buyOnPlay(token: customer.token, silent: true)
            let token = try #require(bought.purchaseToken)
            let pushes = try CraftedPlayPushes(pipeline)
            let (first, second) = ("projects/tenant-a/subscriptions/play-rtdn", "projects/tenant-b/subscriptions/play-rtdn")
            let messageID = "10000000000000042"
            func scope(_ subscription: String) -> String {
                ReceiptScope.google(accountID: pipeline.accountID, subscription: subscription, packageName: Pipeline.packageName)
            }
            // Scope → [outcome, job id] of the message's receipts.
            func receipts() async throws -> [String: [String]] {
                try await pipeline.database.pool.query("""
                    SELECT scope, outcome, job_id::text FROM notification_receipts WHERE store = 'google' AND message_id = $1
                    """, [messageID]).reduce(into: [:]) { $0[try $1.decode(0)] = [try $1.decode(1), try $1.decode(2)] }
            }

            #expect(try await pushes.post(messageID: messageID, purchaseToken: token, subscription: first) == [200])
            try await pipeline.settle()
            let fetchedForFirst = play.requestCount(.subscriptionsV2)
            #expect(try await pushes.post(messageID: messageID, purchaseToken: token, subscription: second) == [200])
            try await pipeline.settle()
            let fetchedForBoth = play.requestCount(.subscriptionsV2)
            #expect(fetchedForFirst > 0 && fetchedForBoth > fetchedForFirst,
                    "the second subscription's push was not re-fetched: \(fetchedForFirst), then \(fetchedForBoth)")
            let processed = try await receipts()
            #expect(processed.keys.sorted() == [scope(first), scope(second)].sorted())
            #expect(processed.values.allSatisfy { $0.first == "mirrored" }, "\(processed)")

            // The same subscription's push again: its receipt is found before any work, and nothing is written.
            #expect(try await pushes.post(messageID: messageID, purchaseToken: token, subscription: first) == [200])
            try await pipeline.settle()
            #expect(try await receipts() == processed)
            #expect(play.requestCount(.subscriptionsV2) == fetchedForBoth)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.invoices(try await pipeline.lineage(ofPlayToken: token)).count == 1)
            #expect(pipeline.retriedJobs() == 0)
        }
    }
}
