import Foundation
import HTTP
import Simulator
import Testing

/// The Play Developer API answers with Google's JSON: `subscriptionsv2.get`, `orders.get`/`batchGet`,
/// `subscriptions.acknowledge`, `voidedpurchases.list`, and Google's errors (404, 400, 410).
@Suite struct GoogleAPITests {
    @Test func aPurchaseReadsBackAsSubscriptionPurchaseV2() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let orderId = try #require(harness.simulator.subscription(token)?.latestSuccessfulOrderId)
        let body = try await harness.subscriptionV2(token)
        #expect(body["kind"] as? String == "androidpublisher#subscriptionPurchaseV2")
        #expect(body["startTime"] as? String == "2026-01-01T00:00:00.123Z")
        #expect(body["regionCode"] as? String == "US")
        #expect(body["subscriptionState"] as? String == "SUBSCRIPTION_STATE_ACTIVE")
        #expect(body["acknowledgementState"] as? String == "ACKNOWLEDGEMENT_STATE_PENDING")
        #expect((body["externalAccountIdentifiers"] as? [String: Any])?["obfuscatedExternalAccountId"] as? String == "account-7e3fb20b")
        for absent in ["testPurchase", "linkedPurchaseToken", "canceledStateContext", "pausedStateContext", "latestOrderId"] {
            #expect(body[absent] == nil, "\(absent)")
        }
        let item = try lineItem(body)
        #expect(item["productId"] as? String == GoogleFixture.monthly)
        #expect(item["expiryTime"] as? String == "2026-01-31T00:00:00.123Z")
        #expect(item["latestSuccessfulOrderId"] as? String == orderId)
        let plan = try #require(item["autoRenewingPlan"] as? [String: Any])
        #expect(plan["autoRenewEnabled"] as? Bool == true)
        #expect(money(plan["recurringPrice"]) == ["currencyCode": "USD", "units": "9", "nanos": "990000000"])
        #expect(item["offerDetails"] as? [String: String] == ["basePlanId": "monthly"])
        await harness.close()
    }

    @Test func licenceTesterPurchasesCarryAnEmptyTestPurchaseObject() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase(testPurchase: true, accountId: nil)
        let body = try await harness.subscriptionV2(token)
        #expect((body["testPurchase"] as? [String: Any])?.isEmpty == true)
        #expect(body["externalAccountIdentifiers"] == nil)
        #expect(try lineItem(body)["expiryTime"] as? String == "2026-01-01T00:05:00.123Z")
        await harness.close()
    }

    @Test func stateContextsFollowTheLifecycle() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        try await harness.simulator.pause(token, for: .seconds(7 * 86_400), silent: true)
        let paused = try await harness.subscriptionV2(token)
        #expect((paused["pausedStateContext"] as? [String: String])?["autoResumeTime"] == "2026-02-07T00:00:00.123Z")

        try await harness.simulator.resume(token, silent: true)
        try await harness.simulator.cancel(token, silent: true)
        let cancelled = try await harness.subscriptionV2(token)
        let context = try #require(cancelled["canceledStateContext"] as? [String: Any])
        let user = try #require(context["userInitiatedCancellation"] as? [String: Any])
        #expect(user["cancelTime"] as? String == "2026-01-31T00:00:00.123Z")
        let plan = try #require(try lineItem(cancelled)["autoRenewingPlan"] as? [String: Any])
        // Like Google's proto3 JSON, a false autoRenewEnabled is left out.
        #expect(plan["autoRenewEnabled"] == nil && plan["recurringPrice"] != nil)

        try await harness.simulator.expire(token, silent: true)
        let expired = try await harness.subscriptionV2(token)
        #expect(expired["subscriptionState"] as? String == "SUBSCRIPTION_STATE_EXPIRED")
        #expect(expired["canceledStateContext"] != nil && expired["pausedStateContext"] == nil)
        await harness.close()
    }

    @Test func anUpgradeLinksTheNewTokenToTheOldOne() async throws {
        let harness = try GoogleHarness(push: false)
        let old = try await harness.purchase()
        let upgraded = try await harness.simulator.upgrade(old, to: GoogleFixture.yearly, basePlanId: "yearly", price: 9999, silent: true)
        let new = try #require(upgraded.purchaseToken)
        #expect(new != old)
        let body = try await harness.subscriptionV2(new)
        #expect(body["linkedPurchaseToken"] as? String == old)
        #expect(body["acknowledgementState"] as? String == "ACKNOWLEDGEMENT_STATE_PENDING")
        #expect((body["externalAccountIdentifiers"] as? [String: Any])?["obfuscatedExternalAccountId"] as? String == "account-7e3fb20b")
        let item = try lineItem(body)
        #expect(item["productId"] as? String == GoogleFixture.yearly)
        #expect(item["latestSuccessfulOrderId"] as? String == upgraded.orderId)
        #expect(item["itemReplacement"] as? [String: String] == ["productId": GoogleFixture.monthly, "basePlanId": "monthly",
                                                                 "replacementMode": "CHARGE_PRORATED_PRICE"])
        let previous = try await harness.subscriptionV2(old)
        #expect(previous["subscriptionState"] as? String == "SUBSCRIPTION_STATE_EXPIRED")
        #expect((previous["canceledStateContext"] as? [String: Any])?["replacementCancellation"] != nil)
        #expect(harness.simulator.subscription(old)?.replacedBy == new)
        await harness.close()
    }

    /// Price and tax in minor units, the currency, and the `total` and `tax` Money Google reports.
    static let moneyCases: [(Int64, Int64, String, [String: String], [String: String])] = [
        (999, 159, "USD", ["currencyCode": "USD", "units": "9", "nanos": "990000000"],
         ["currencyCode": "USD", "units": "1", "nanos": "590000000"]),
        (1200, 0, "JPY", ["currencyCode": "JPY", "units": "1200"], ["currencyCode": "JPY"]),
        (4250, 125, "BHD", ["currencyCode": "BHD", "units": "4", "nanos": "250000000"], ["currencyCode": "BHD", "nanos": "125000000"]),
        (0, 0, "EUR", ["currencyCode": "EUR"], ["currencyCode": "EUR"]),
    ]

    @Test("orders report exact Money in units and nanos", arguments: moneyCases)
    func orderMoney(_ price: Int64, _ tax: Int64, _ currency: String, _ total: [String: String],
                    _ expectedTax: [String: String]) async throws {
        let harness = try GoogleHarness(push: false)
        let result = try await harness.simulator.purchase(packageName: GoogleFixture.packageName, productId: GoogleFixture.monthly,
                                                          basePlanId: "monthly", price: price, tax: tax, currency: currency,
                                                          silent: true)
        let orderId = try #require(result.orderId)
        let order = try jsonObject(try await harness.api("GET", "orders/\(orderId)"))
        #expect(order["orderId"] as? String == orderId && order["purchaseToken"] as? String == result.purchaseToken)
        #expect(order["state"] as? String == "PROCESSED")
        #expect(money(order["total"]) == total)
        #expect(money(order["tax"]) == expectedTax)
        let item = try #require((order["lineItems"] as? [[String: Any]])?.first)
        #expect(money(item["total"]) == total)
        await harness.close()
    }

    @Test func renewalOrdersCoverTheirServicePeriodAndRefundsAppearInTheirHistory() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let renewal = try #require(try await harness.simulator.renew(token, silent: true).orderId)
        let order = try jsonObject(try await harness.api("GET", "orders/\(renewal)"))
        #expect(order["createTime"] as? String == "2026-01-31T00:00:00.123Z")
        let details = try #require((order["lineItems"] as? [[String: Any]])?.first?["subscriptionDetails"] as? [String: Any])
        #expect(details["basePlanId"] as? String == "monthly")
        #expect(details["servicePeriodStartTime"] as? String == "2026-01-31T00:00:00.123Z")
        #expect(details["servicePeriodEndTime"] as? String == "2026-03-02T00:00:00.123Z")

        try harness.simulator.advanceClock(by: .seconds(3600))
        try await harness.simulator.refund(token, silent: true)
        let refunded = try jsonObject(try await harness.api("GET", "orders/\(renewal)"))
        #expect(refunded["state"] as? String == "REFUNDED")
        #expect(refunded["lastEventTime"] as? String == "2026-01-31T01:00:00.123Z")
        let refund = try #require((refunded["orderHistory"] as? [String: Any])?["refundEvent"] as? [String: Any])
        let refundDetails = try #require(refund["refundDetails"] as? [String: Any])
        #expect(money(refundDetails["total"]) == ["currencyCode": "USD", "units": "9", "nanos": "990000000"])

        let batch = try jsonObject(try await harness.api("GET", "orders:batchGet?orderIds=\(renewal)&orderIds=\(try #require(harness.simulator.subscription(token)?.orderIds.first))"))
        #expect((batch["orders"] as? [[String: Any]])?.count == 2)
        #expect(try await harness.api("GET", "orders:batchGet?orderIds=\(renewal)&orderIds=GPA.0000-0000-0000-00000").status == 404)
        #expect(try await harness.api("GET", "orders/GPA.0000-0000-0000-00000").status == 404)
        await harness.close()
    }

    @Test func acknowledgingRecordsItOnceAndASecondTimeIsRefused() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let path = "purchases/subscriptions/\(GoogleFixture.monthly)/tokens/\(token):acknowledge"
        let body = Data(#"{"developerPayload":"order-42"}"#.utf8)
        let first = try await harness.api("POST", path, body: body)
        #expect(first.status == 204 && first.body.isEmpty)
        #expect(try await harness.subscriptionV2(token)["acknowledgementState"] as? String == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED")
        let again = try await harness.api("POST", path)
        #expect(again.status == 400)
        let acknowledgement = try #require(harness.simulator.acknowledgements.first)
        #expect(harness.simulator.acknowledgements.count == 1)
        #expect(acknowledgement.packageName == GoogleFixture.packageName && acknowledgement.purchaseToken == token)
        #expect(acknowledgement.subscriptionId == GoogleFixture.monthly && acknowledgement.body == #"{"developerPayload":"order-42"}"#)
        #expect(acknowledgement.receivedAt == milliseconds(GoogleFixture.start))
        #expect(harness.simulator.requestCount(.acknowledge) == 2)
        #expect(try await harness.api("POST", path, body: Data("not json".utf8)).status == 400)
        await harness.close()
    }

    @Test func unknownTokensAndPackagesAreGooglesErrors() async throws {
        let harness = try GoogleHarness(push: false, packages: [GoogleFixture.packageName, GoogleFixture.otherPackageName])
        let token = try await harness.purchase()
        let unknown = try await harness.api("GET", "purchases/subscriptionsv2/tokens/unknown-token")
        #expect(unknown.status == 404 && googleReason(unknown) == "purchaseTokenNotFound")
        #expect(try googleError(unknown)["code"] as? Int == 404 && (try googleError(unknown))["status"] as? String == "NOT_FOUND")
        let otherPackage = try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)", package: GoogleFixture.otherPackageName)
        #expect(otherPackage.status == 400 && googleReason(otherPackage) == "purchaseTokenDoesNotMatchPackageName")
        let noApp = try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)", package: "com.example.missing")
        #expect(noApp.status == 404 && googleReason(noApp) == "applicationNotFound")
        #expect(try await harness.api("GET", "purchases/subscriptionsv3/tokens/\(token)").status == 404)
        await harness.close()
    }

    @Test func aTokenExpiredLongAgoAnswers410() async throws {
        let harness = try GoogleHarness(push: false)
        let gone = try await harness.purchase()
        try await harness.simulator.expireLongAgo(gone, silent: true)
        let answer = try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(gone)")
        #expect(answer.status == 410)
        #expect(try googleError(answer)["code"] as? Int == 410)
        #expect(googleReason(answer) == "subscriptionPurchaseNoLongerAvailable")
        let acknowledge = try await harness.api("POST", "purchases/subscriptions/\(GoogleFixture.monthly)/tokens/\(gone):acknowledge")
        #expect(acknowledge.status == 410)
        // Its order is still refunded, and orders.get still answers for it.
        let refunded = try #require(try await harness.simulator.refund(gone, revoke: false, silent: true).orderId)
        #expect(try jsonObject(try await harness.api("GET", "orders/\(refunded)"))["state"] as? String == "REFUNDED")
        #expect(try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(gone)").status == 410)

        // Google also stops answering 60 days after a subscription expired.
        let token = try await harness.purchase()
        try await harness.simulator.cancel(token, silent: true)
        try await harness.simulator.expire(token, silent: true)
        try harness.simulator.advanceClock(by: .seconds(60 * 86_400))
        #expect(try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)").status == 200)
        try harness.simulator.advanceClock(by: .milliseconds(1))
        #expect(try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)").status == 410)
        await harness.close()
    }

    @Test func voidedPurchasesAreListedOldestFirstInPages() async throws {
        let harness = try GoogleHarness(push: false)
        var refunded: [(token: String, orderId: String)] = []
        for _ in 0..<3 {
            let token = try await harness.purchase()
            let refund = try await harness.simulator.refund(token, source: .google, reason: .chargeback, silent: true)
            refunded.append((token, try #require(refund.orderId)))
            try harness.simulator.advanceClock(by: .seconds(60))
        }
        let partialToken = try await harness.purchase()
        try await harness.simulator.refund(partialToken, revoke: false, partialAmount: 100, silent: true)

        // type 0 (the default) lists one-time products only.
        let oneTime = try jsonObject(try await harness.api("GET", "purchases/voidedpurchases"))
        #expect(oneTime["voidedPurchases"] == nil)

        let first = try jsonObject(try await harness.api("GET", "purchases/voidedpurchases?type=1&maxResults=2"))
        let page = try #require(first["voidedPurchases"] as? [[String: Any]])
        #expect(page.map { $0["orderId"] as? String } == refunded.prefix(2).map(\.orderId))
        #expect(page[0]["purchaseToken"] as? String == refunded[0].token)
        #expect(page[0]["kind"] as? String == "androidpublisher#voidedPurchase")
        #expect(page[0]["voidedTimeMillis"] as? String == String(milliseconds(GoogleFixture.start)))
        #expect(page[0]["purchaseTimeMillis"] as? String == String(milliseconds(GoogleFixture.start)))
        #expect(page[0]["voidedSource"] as? Int == 2 && page[0]["voidedReason"] as? Int == 7)
        let next = try #require((first["tokenPagination"] as? [String: String])?["nextPageToken"])
        let second = try jsonObject(try await harness.api("GET", "purchases/voidedpurchases?type=1&maxResults=2&token=\(next)"))
        #expect((second["voidedPurchases"] as? [[String: Any]])?.map { $0["orderId"] as? String } == [refunded[2].orderId])
        #expect(second["tokenPagination"] == nil)

        let withPartial = try jsonObject(try await harness.api(
            "GET", "purchases/voidedpurchases?type=1&includeQuantityBasedPartialRefund=true"))
        let all = try #require(withPartial["voidedPurchases"] as? [[String: Any]])
        #expect(all.count == 4 && all.last?["voidedQuantity"] as? Int == 1)

        let windowStart = milliseconds(GoogleFixture.start) + 60_000
        let window = try jsonObject(try await harness.api("GET", "purchases/voidedpurchases?type=1&startTime=\(windowStart)&endTime=\(windowStart)"))
        #expect((window["voidedPurchases"] as? [[String: Any]])?.map { $0["orderId"] as? String } == [refunded[1].orderId])

        let tooOld = milliseconds(harness.simulator.now) - 31 * GoogleFixture.day
        for query in ["type=2", "startTime=\(tooOld)", "maxResults=0", "token=bogus", "endTime=\(Int64.max)",
                      "type=1&maxResults=1&token=\(next)"] {
            let refused = try await harness.api("GET", "purchases/voidedpurchases?\(query)")
            #expect(refused.status == 400, "\(query)")
        }
        await harness.close()
    }
}

/// A Google `Money` object with every field as text, so JSON numbers compare without bridging concerns.
private func money(_ value: Any?) -> [String: String]? {
    (value as? [String: Any])?.mapValues { "\($0)" }
}
