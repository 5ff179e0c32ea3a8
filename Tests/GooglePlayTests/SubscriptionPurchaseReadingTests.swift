import Foundation
import GooglePlay
import StrictJSON
import Testing

private func read(_ json: String) throws -> SubscriptionPurchaseV2 {
    try SubscriptionPurchaseV2(json: Data(json.utf8))
}

private let cancelled = Date(timeIntervalSince1970: 1_747_816_200)  // 2025-05-21T08:30:00Z

/// Guards how `SubscriptionPurchaseV2` reads Google's JSON: `null` is absent, unknown fields are skipped (but still
/// checked as JSON), a repeated field takes its last value, the `oneof` objects say their case by the key present,
/// and a field of the wrong kind is refused with its path and what was wrong.
@Suite("subscriptionsv2 reading")
struct SubscriptionPurchaseReadingTests {
    @Test("a field of the wrong kind is refused with its path and what was wrong", arguments: [
        (#"{"startTime":1747735200}"#, "bad startTime: expected an RFC 3339 time, found a number"),
        (#"{"lineItems":[{"expiryTime":"2025-05-20"}]}"#,
         #"bad lineItems[0].expiryTime: expected an RFC 3339 time, found "2025-05-20""#),
        (#"{"pausedStateContext":{"autoResumeTime":"2025-13-01T00:00:00Z"}}"#,
         "bad pausedStateContext.autoResumeTime: expected an RFC 3339 time"),
        (#"{"lineItems":[{},{"autoRenewingPlan":{"recurringPrice":{"units":"1.5"}}}]}"#,
         "bad lineItems[1].autoRenewingPlan.recurringPrice.units: expected an integer (Int64) as a decimal string"),
        (#"{"lineItems":[{"autoRenewingPlan":{"autoRenewEnabled":"true"}}]}"#,
         "bad lineItems[0].autoRenewingPlan.autoRenewEnabled: expected a boolean, found a string"),
        (#"{"lineItems":[{"offerDetails":{"offerTags":["a",null]}}]}"#,
         "bad lineItems[0].offerDetails.offerTags[1]: expected a string, found null"),
        (#"{"lineItems":[{"offerPhase":"basePrice"}]}"#, "bad lineItems[0].offerPhase: expected an object, found a string"),
        (#"{"lineItems":[{"prepaidPlan":{"allowExtendAfterTime":"soon"}}]}"#,
         "bad lineItems[0].prepaidPlan.allowExtendAfterTime: expected an RFC 3339 time"),
        (#"{"lineItems":[1]}"#, "bad lineItems[0]: expected an object, found a number"),
        (#"{"lineItems":{}}"#, "bad lineItems: expected an array, found an object"),
        (#"{"testPurchase":true}"#, "bad testPurchase: expected an object, found a boolean"),
        (#"{"canceledStateContext":{"userInitiatedCancellation":{"cancelTime":"yesterday"}}}"#,
         #"bad canceledStateContext.userInitiatedCancellation.cancelTime: expected an RFC 3339 time, found "yesterday""#),
        (#"{"canceledStateContext":{"userInitiatedCancellation":[]}}"#,
         "bad canceledStateContext.userInitiatedCancellation: expected an object, found an array"),
        (#"{"externalAccountIdentifiers":{"obfuscatedExternalAccountId":7}}"#,
         "bad externalAccountIdentifiers.obfuscatedExternalAccountId: expected a string, found a number"),
        (#"{"outOfAppPurchaseContext":{"expiredExternalAccountIdentifiers":{"externalAccountId":false}}}"#,
         "bad outOfAppPurchaseContext.expiredExternalAccountIdentifiers.externalAccountId: expected a string, found a boolean"),
        (#"{"subscriptionState":["SUBSCRIPTION_STATE_ACTIVE"]}"#, "bad subscriptionState: expected a string, found an array"),
        ("[]", "expected an object, found an array"),
        (#"{"futureField":[1,]}"#, "malformed JSON at byte 18"),
        (#"{"kind":"k"} {}"#, "malformed JSON at byte 13: unexpected data after the JSON value"),
    ])
    func refused(json: String, message: String) {
        let error = #expect(throws: JSONReaderError.self) { try read(json) }
        #expect(error?.description.hasPrefix(message) == true, "\(error.map(String.init(describing:)) ?? "accepted")")
    }

    @Test("null is absent: no line items, no test marker, no contexts")
    func nulls() throws {
        let purchase = try read(#"""
            {"kind":null,"startTime":null,"lineItems":null,"testPurchase":null,"canceledStateContext":null,
             "pausedStateContext":null,"externalAccountIdentifiers":null,"outOfAppPurchaseContext":null}
            """#)
        #expect(purchase.kind == nil && purchase.startTime == nil && purchase.lineItems.isEmpty && !purchase.isTestPurchase)
        #expect(purchase.canceledStateContext == nil && purchase.pausedStateContext == nil)
        #expect(purchase.externalAccountIdentifiers == nil && purchase.outOfAppPurchaseContext == nil)
        let item = try #require(try read(#"{"lineItems":[{"productId":null,"expiryTime":null,"offerPhase":null}]}"#).lineItems.first)
        #expect(item.productId == nil && item.expiryTime == nil && item.offerPhase == nil)
    }

    @Test("a repeated field takes its last value")
    func repeated() throws {
        let purchase = try read(#"""
            {"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","subscriptionState":"SUBSCRIPTION_STATE_EXPIRED",
             "lineItems":[{"productId":"a"}],"lineItems":[{"productId":"b","productId":"c"}],
             "testPurchase":{},"testPurchase":null,"regionCode":null,"regionCode":"DE"}
            """#)
        #expect(purchase.subscriptionState == "SUBSCRIPTION_STATE_EXPIRED")
        #expect(purchase.lineItems.map(\.productId) == ["c"])
        #expect(!purchase.isTestPurchase)
        #expect(purchase.regionCode == "DE")
    }

    @Test("unknown fields of any kind are skipped, known ones still read")
    func unknownFields() throws {
        let purchase = try read(#"""
            {"futureObject":{"a":[1,2.5e-3,{"b":null}],"c":"\u00e9"},"kind":"k","futureList":[[],[true,false]],
             "lineItems":[{"futureItemField":{"x":1},"productId":"p","itemReplacement":{"productId":7}}],
             "testPurchase":{"futureTestField":1}}
            """#)
        #expect(purchase.kind == "k")
        #expect(purchase.lineItems.map(\.productId) == ["p"])
        #expect(purchase.isTestPurchase)
    }

    @Test("who cancelled is the context present; only the user's carries a time", arguments: [
        (#"{"systemInitiatedCancellation":{}}"#, "systemInitiatedCancellation" as String?, nil as Date?),
        (#"{"replacementCancellation":{}}"#, "replacementCancellation", nil),
        (#"{"developerInitiatedCancellation":{}}"#, "developerInitiatedCancellation", nil),
        (#"{"userInitiatedCancellation":{"cancelSurveyResult":{"reason":"CANCEL_SURVEY_REASON_OTHERS"},"cancelTime":"2025-05-21T08:30:00Z"}}"#,
         "userInitiatedCancellation", cancelled),
        (#"{"userInitiatedCancellation":{}}"#, "userInitiatedCancellation", nil),
        (#"{"userInitiatedCancellation":null,"developerInitiatedCancellation":{}}"#, "developerInitiatedCancellation", nil),
        (#"{"userInitiatedCancellation":{"cancelTime":"2025-05-21T08:30:00Z"},"userInitiatedCancellation":{}}"#,
         "userInitiatedCancellation", nil),
        (#"{"userInitiatedCancellation":{"cancelTime":"2025-05-21T08:30:00Z"},"userInitiatedCancellation":null}"#, nil, nil),
        (#"{"systemInitiatedCancellation":{},"replacementCancellation":{}}"#, "replacementCancellation", nil),
        ("{}", nil, nil),
    ])
    func canceled(context: String, initiator: String?, cancelTime: Date?) throws {
        let state = try #require(try read(#"{"canceledStateContext":\#(context)}"#).canceledStateContext)
        #expect(state.initiator == initiator)
        #expect(state.cancelTime == cancelTime)
    }

    @Test("the offer phase is the key its object carries", arguments: [
        (#"{"freeTrial":{}}"#, "freeTrial" as String?), (#"{"introductoryPrice":{"x":1}}"#, "introductoryPrice"),
        (#"{"prorationPeriod":null,"basePrice":{}}"#, "basePrice"), (#"{"freeTrial":{},"basePrice":{}}"#, "basePrice"),
        ("{}", nil), ("null", nil),
    ])
    func offerPhase(phase: String, expected: String?) throws {
        #expect(try read(#"{"lineItems":[{"offerPhase":\#(phase)}]}"#).lineItems.first?.offerPhase == expected)
    }

    @Test("the recurring price reads units as a string or a number, nanos likewise, both absent as zero", arguments: [
        (#"{"currencyCode":"EUR","units":"4","nanos":990000000}"#, GooglePlayMoney(currencyCode: "EUR", units: 4, nanos: 990_000_000)),
        (#"{"currencyCode":"EUR","units":4,"nanos":"990000000"}"#, GooglePlayMoney(currencyCode: "EUR", units: 4, nanos: 990_000_000)),
        (#"{"currencyCode":"EUR"}"#, GooglePlayMoney(currencyCode: "EUR", units: 0)),
        (#"{"units":"-1","nanos":-500000000}"#, GooglePlayMoney(currencyCode: nil, units: -1, nanos: -500_000_000)),
    ])
    func recurringPrice(money: String, expected: GooglePlayMoney) throws {
        let purchase = try read(#"{"lineItems":[{"autoRenewingPlan":{"autoRenewEnabled":false,"recurringPrice":\#(money)}}]}"#)
        #expect(purchase.lineItems.first?.autoRenewingPlan?.recurringPrice == expected)
        #expect(purchase.lineItems.first?.autoRenewingPlan?.autoRenewEnabled == false)
    }
}
