import AppStore
import Foundation
import HTTP
import Simulator
import Testing

/// Get All Subscription Statuses: Apple's response shape, signed answers, lookups by any transaction id.
@Suite struct SubscriptionStatusTests {
    @Test func answersApplesShapeWithFreshlySignedPayloadsForAnyTransactionOfTheLineage() async throws {
        let harness = try Harness()
        let id = try await harness.subscribe()
        let renewed = try await harness.simulator.renew(id, silent: true)
        try harness.simulator.advanceClock(by: .seconds(3600))

        for lookup in [id, renewed.transactionId] {
            let response = try await harness.send("GET", "/inApps/v1/subscriptions/\(lookup)")
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json")
            let body = try jsonObject(response)
            #expect(body["environment"] as? String == "Production")
            #expect(body["bundleId"] as? String == Fixture.bundleID)
            #expect((body["appAppleId"] as? NSNumber)?.int64Value == Fixture.appAppleID)
            let groups = try #require(body["data"] as? [[String: Any]])
            #expect(groups.count == 1)
            #expect(groups[0]["subscriptionGroupIdentifier"] as? String == "21000001")
            let last = try #require(groups[0]["lastTransactions"] as? [[String: Any]])
            #expect(last.count == 1)
            #expect(last[0]["status"] as? Int == 1)
            #expect(last[0]["originalTransactionId"] as? String == id)

            let transaction = try harness.verifier.verifyTransaction(#require(last[0]["signedTransactionInfo"] as? String))
            #expect(transaction.transactionId == renewed.transactionId)
            #expect(transaction.signedDate == harness.simulator.now)
            #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
            #expect(transaction.type == "Auto-Renewable Subscription" && transaction.inAppOwnershipType == "PURCHASED")
            #expect(transaction.storefront == "USA" && transaction.quantity == 1)
            let renewal = try harness.verifier.verifyRenewalInfo(#require(last[0]["signedRenewalInfo"] as? String))
            #expect(renewal.originalTransactionId == id && renewal.autoRenewStatus == 1 && renewal.renewalPrice == 9990)
            #expect(renewal.renewalDate == transaction.expiresDate && renewal.signedDate == harness.simulator.now)
        }
        await harness.close()
    }

    @Test func theStatusFilterKeepsOrDropsTheSubscription() async throws {
        let harness = try Harness()
        let id = try await harness.subscribe()
        let kept = try jsonObject(try await harness.send("GET", "/inApps/v1/subscriptions/\(id)?status=1&status=4"))
        #expect((kept["data"] as? [Any])?.count == 1)
        let dropped = try jsonObject(try await harness.send("GET", "/inApps/v1/subscriptions/\(id)?status=2"))
        #expect((dropped["data"] as? [Any])?.isEmpty == true)
        let invalid = try await harness.send("GET", "/inApps/v1/subscriptions/\(id)?status=9")
        #expect(invalid.status == 400 && errorCode(invalid) == 4_000_031)
        await harness.close()
    }

    @Test func unknownForeignAndMalformedIdsGetApplesErrors() async throws {
        let other = try Fixture.app(Fixture.otherBundleID)
        let harness = try Harness(apps: [try Fixture.app(), other])
        let foreign = try await harness.simulator.subscribe(bundleID: Fixture.otherBundleID, productId: "p", price: 990,
                                                            currency: "EUR", silent: true).originalTransactionId

        let unknown = try await harness.send("GET", "/inApps/v1/subscriptions/2000000999999999")
        #expect(unknown.status == 404)
        #expect(String(decoding: unknown.body, as: UTF8.self) == #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)
        // Another app's transaction does not exist for this app's token.
        let notOurs = try await harness.send("GET", "/inApps/v1/subscriptions/\(foreign)")
        #expect(notOurs.status == 404 && errorCode(notOurs) == 4_040_010)
        let theirs = try await harness.send("GET", "/inApps/v1/subscriptions/\(foreign)",
                                            authorization: "Bearer \(try harness.token(bundleID: Fixture.otherBundleID))")
        #expect(theirs.status == 200)
        let malformed = try await harness.send("GET", "/inApps/v1/subscriptions/abc")
        #expect(malformed.status == 400 && errorCode(malformed) == 4_000_006)
        let deeper = try await harness.send("GET", "/inApps/v1/subscriptions/1/2")
        #expect(deeper.status == 404 && errorCode(deeper) == nil)
        await harness.close()
    }
}
