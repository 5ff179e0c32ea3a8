@testable import AppStore
import Foundation
import StrictJSON
import Testing

private func notification(_ json: String) throws -> NotificationPayload { try JSONReader.read(Data(json.utf8), NotificationPayload.init(json:)) }
private func transaction(_ json: String) throws -> TransactionPayload { try JSONReader.read(Data(json.utf8), TransactionPayload.init(json:)) }
private func renewal(_ json: String) throws -> RenewalInfoPayload { try JSONReader.read(Data(json.utf8), RenewalInfoPayload.init(json:)) }

/// What the reader refuses `json` with when `read` decodes it, or nil when it decodes.
private func refusal<T>(_ json: String, _ read: (inout JSONReader) throws -> T) -> JSONReaderError? {
    do { _ = try JSONReader.read(Data(json.utf8), read) } catch { return error as? JSONReaderError }
    return nil
}

/// `2025-06-01T00:00:00.123Z` and its milliseconds, as Apple writes dates.
private let date = Date(timeIntervalSince1970: 1_748_736_000.123)
private let ms = "1748736000123"

/// Guards the payload models' decoding: every documented field read from its exact key with its type, unknown
/// fields and `null` ignored, required fields enforced, and a wrong value named by its path.
@Suite("Payload decoding")
struct PayloadDecodingTests {
    @Test("every notification field, nested ones included, is read from its key")
    func notificationFields() throws {
        let payload = try notification("""
            {"notificationType":"DID_RENEW","subtype":"BILLING_RECOVERY","notificationUUID":"u-1","version":"2.0",
             "signedDate":\(ms),
             "data":{"environment":"Sandbox","appAppleId":1234567890,"bundleId":"com.example","bundleVersion":"7",
                     "signedTransactionInfo":"t.t.t","signedRenewalInfo":"r.r.r","status":4,
                     "consumptionRequestReason":"UNINTENDED_PURCHASE"},
             "summary":{"environment":"Production","appAppleId":42,"bundleId":"com.example.s","productId":"p",
                        "requestIdentifier":"req","succeededCount":9007199254740993,"failedCount":0},
             "externalPurchaseToken":{"externalPurchaseId":"SANDBOX_1","tokenCreationDate":\(ms),"appAppleId":43,
                                      "bundleId":"com.example.e"},
             "appData":{"appAppleId":44,"bundleId":"com.example.a","environment":"Xcode","signedAppTransactionInfo":"a.a.a"}}
            """)
        #expect(payload.notificationType == "DID_RENEW")
        #expect(payload.subtype == "BILLING_RECOVERY")
        #expect(payload.notificationUUID == "u-1")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == date)
        let data = try #require(payload.data)
        #expect(data.environment == .sandbox)
        #expect(data.appAppleId == 1_234_567_890)
        #expect(data.bundleId == "com.example")
        #expect(data.bundleVersion == "7")
        #expect(data.signedTransactionInfo == "t.t.t")
        #expect(data.signedRenewalInfo == "r.r.r")
        #expect(data.status == 4)
        #expect(data.consumptionRequestReason == "UNINTENDED_PURCHASE")
        let summary = try #require(payload.summary)
        #expect(summary.environment == .production)
        #expect(summary.appAppleId == 42)
        #expect(summary.bundleId == "com.example.s")
        #expect(summary.productId == "p")
        #expect(summary.requestIdentifier == "req")
        #expect(summary.succeededCount == 9_007_199_254_740_993)  // beyond a Double's exact integers
        #expect(summary.failedCount == 0)
        let token = try #require(payload.externalPurchaseToken)
        #expect(token.externalPurchaseId == "SANDBOX_1")
        #expect(token.tokenCreationDate == date)
        #expect(token.appAppleId == 43)
        #expect(token.bundleId == "com.example.e")
        let app = try #require(payload.appData)
        #expect(app.appAppleId == 44)
        #expect(app.bundleId == "com.example.a")
        #expect(app.environment == .other("Xcode"))
        #expect(app.signedAppTransactionInfo == "a.a.a")
    }

    @Test("every transaction field is read from its key")
    func transactionFields() throws {
        let payload = try transaction("""
            {"transactionId":"1","originalTransactionId":"2","webOrderLineItemId":"3","bundleId":"com.example",
             "productId":"p","subscriptionGroupIdentifier":"g","purchaseDate":\(ms),"originalPurchaseDate":0,
             "expiresDate":-1000,"quantity":2,"type":"Auto-Renewable Subscription","appAccountToken":"tok",
             "inAppOwnershipType":"FAMILY_SHARED","signedDate":\(ms),"revocationReason":1,"revocationDate":\(ms),
             "revocationType":"REFUND_PRORATED","revocationPercentage":50000,"isUpgraded":true,"offerType":3,
             "offerIdentifier":"o","offerDiscountType":"FREE_TRIAL","offerPeriod":"P1M","environment":"Production",
             "storefront":"USA","storefrontId":"143441","transactionReason":"PURCHASE","price":-9223372036854775808,
             "currency":"USD","appTransactionId":"app-1"}
            """)
        #expect(payload.transactionId == "1")
        #expect(payload.originalTransactionId == "2")
        #expect(payload.webOrderLineItemId == "3")
        #expect(payload.bundleId == "com.example")
        #expect(payload.productId == "p")
        #expect(payload.subscriptionGroupIdentifier == "g")
        #expect(payload.purchaseDate == date)
        #expect(payload.originalPurchaseDate == Date(timeIntervalSince1970: 0))
        #expect(payload.expiresDate == Date(timeIntervalSince1970: -1))
        #expect(payload.quantity == 2)
        #expect(payload.type == "Auto-Renewable Subscription")
        #expect(payload.appAccountToken == "tok")
        #expect(payload.inAppOwnershipType == "FAMILY_SHARED")
        #expect(payload.signedDate == date)
        #expect(payload.revocationReason == 1)
        #expect(payload.revocationDate == date)
        #expect(payload.revocationType == "REFUND_PRORATED")
        #expect(payload.revocationPercentage == 50_000)
        #expect(payload.isUpgraded == true)
        #expect(payload.offerType == 3)
        #expect(payload.offerIdentifier == "o")
        #expect(payload.offerDiscountType == "FREE_TRIAL")
        #expect(payload.offerPeriod == "P1M")
        #expect(payload.environment == .production)
        #expect(payload.storefront == "USA")
        #expect(payload.storefrontId == "143441")
        #expect(payload.transactionReason == "PURCHASE")
        #expect(payload.price == .min)
        #expect(payload.currency == "USD")
        #expect(payload.appTransactionId == "app-1")
    }

    @Test("every renewal info field is read from its key")
    func renewalFields() throws {
        let payload = try renewal("""
            {"originalTransactionId":"2","productId":"p","autoRenewProductId":"q","autoRenewStatus":0,
             "expirationIntent":2,"isInBillingRetryPeriod":false,"gracePeriodExpiresDate":\(ms),"priceIncreaseStatus":1,
             "renewalDate":\(ms),"recentSubscriptionStartDate":\(ms),"signedDate":\(ms),"renewalPrice":9223372036854775807,
             "currency":"EUR","offerType":2,"offerIdentifier":"o","offerDiscountType":"PAY_UP_FRONT",
             "appAccountToken":"tok","environment":"Sandbox"}
            """)
        #expect(payload.originalTransactionId == "2")
        #expect(payload.productId == "p")
        #expect(payload.autoRenewProductId == "q")
        #expect(payload.autoRenewStatus == 0)
        #expect(payload.expirationIntent == 2)
        #expect(payload.isInBillingRetryPeriod == false)
        #expect(payload.gracePeriodExpiresDate == date)
        #expect(payload.priceIncreaseStatus == 1)
        #expect(payload.renewalDate == date)
        #expect(payload.recentSubscriptionStartDate == date)
        #expect(payload.signedDate == date)
        #expect(payload.renewalPrice == .max)
        #expect(payload.currency == "EUR")
        #expect(payload.offerType == 2)
        #expect(payload.offerIdentifier == "o")
        #expect(payload.offerDiscountType == "PAY_UP_FRONT")
        #expect(payload.appAccountToken == "tok")
        #expect(payload.environment == .sandbox)
    }

    @Test("unknown fields are skipped, null and absent fields read as nil, the last of duplicate keys wins")
    func unknownNullAndDuplicates() throws {
        let payload = try notification("""
            {"future":{"nested":[1,{"deeper":[true,null,"x"]}]},"notificationType":"FIRST","subtype":null,
             "notificationUUID":"u","data":null,"summary":{"futureField":[],"bundleId":null},"notificationType":"LAST",
             "appData":{"bundleId":"a"},"appData":{"appAppleId":1}}
            """)
        #expect(payload.notificationType == "LAST")
        #expect(payload.subtype == nil)
        #expect(payload.data == nil)
        #expect(payload.summary?.bundleId == nil)
        #expect(payload.version == nil)
        #expect(payload.signedDate == nil)
        #expect(payload.appData?.bundleId == nil)  // the whole second object replaces the first
        #expect(payload.appData?.appAppleId == 1)
        let empty = try transaction("{}")
        #expect(empty.transactionId == nil && empty.price == nil && empty.signedDate == nil)
    }

    @Test("keys match exactly: case, escapes resolved, no prefixes", arguments: [
        (#"{"Price":1}"#, nil), (#"{"price ":1}"#, nil), (#"{"pric":1}"#, nil), (#"{"prices":1}"#, nil),
        (#"{"\u0070rice":7}"#, 7), (#"{"price":7}"#, 7),
    ] as [(String, Int64?)])
    func exactKeys(json: String, price: Int64?) throws {
        #expect(try transaction(json).price == price)
    }

    @Test("unknown notification types, subtypes and environments are kept verbatim", arguments: [
        "FUTURE_TYPE", "", "with space", "ünïcode", "quote\"d",
    ])
    func verbatimValues(value: String) throws {
        let escaped = value.replacingOccurrences(of: "\"", with: "\\\"")
        let payload = try notification("""
            {"notificationType":"\(escaped)","subtype":"\(escaped)","notificationUUID":"u",
             "data":{"environment":"\(escaped)"}}
            """)
        #expect(payload.notificationType == value)
        #expect(payload.subtype == value)
        #expect(payload.data?.environment == AppStoreEnvironment(rawValue: value))
        #expect(payload.data?.environment?.rawValue == value)
    }

    @Test("dates are integer milliseconds in any notation; fractions and overflow are refused", arguments: [
        ("1.748736000123e12", date.timeIntervalSince1970), ("1748736000123.000", date.timeIntervalSince1970),
        ("0", 0), ("-86400000", -86_400), ("9223372036854775807", 9_223_372_036_854_775.807),
    ] as [(String, TimeInterval)])
    func dates(text: String, seconds: TimeInterval) throws {
        #expect(try transaction(#"{"purchaseDate":\#(text)}"#).purchaseDate == Date(timeIntervalSince1970: seconds))
    }

    /// Each refusal names the field by its path and says what was wrong.
    @Test("a wrong value for a known field is refused with its path", arguments: [
        (#"{"notificationUUID":"u"}"#, "missing notificationType"),
        (#"{"notificationType":null,"notificationUUID":"u"}"#, "missing notificationType"),
        (#"{"notificationType":"T"}"#, "missing notificationUUID"),
        (#"{"notificationType":1,"notificationUUID":"u"}"#, "bad notificationType: expected a string, found a number"),
        (#"{"notificationType":"T","notificationUUID":"u","signedDate":"2025-06-01"}"#,
         "bad signedDate: expected an integer, found a string"),
        (#"{"notificationType":"T","notificationUUID":"u","signedDate":1.5}"#, "bad signedDate: expected an integer, found 1.5"),
        (#"{"notificationType":"T","notificationUUID":"u","data":{"status":"1"}}"#,
         "bad data.status: expected an integer, found a string"),
        (#"{"notificationType":"T","notificationUUID":"u","data":{"appAppleId":1e19}}"#,
         "bad data.appAppleId: 1e19 is out of the 64-bit integer range"),
        (#"{"notificationType":"T","notificationUUID":"u","data":{"environment":true}}"#,
         "bad data.environment: expected a string, found a boolean"),
        (#"{"notificationType":"T","notificationUUID":"u","data":[]}"#, "bad data: expected an object, found an array"),
        (#"{"notificationType":"T","notificationUUID":"u","summary":{"failedCount":-0.5}}"#,
         "bad summary.failedCount: expected an integer, found -0.5"),
        (#"{"notificationType":"T","notificationUUID":"u","externalPurchaseToken":{"tokenCreationDate":{}}}"#,
         "bad externalPurchaseToken.tokenCreationDate: expected an integer, found an object"),
        (#"{"notificationType":"T","notificationUUID":"u","appData":"x"}"#, "bad appData: expected an object, found a string"),
        (#"[]"#, "expected an object, found an array"),
        (#"{"notificationType":"T","notificationUUID":"u","data":{"status":1}} x"#,
         "malformed JSON at byte 68: unexpected data after the JSON value"),
    ])
    func notificationRefusals(json: String, reason: String) {
        #expect(refusal(json, NotificationPayload.init(json:))?.description == reason)
    }

    @Test("wrong values in transactions and renewal infos are refused with their field", arguments: [
        (#"{"price":4.99}"#, "bad price: expected an integer, found 4.99"),
        (#"{"isUpgraded":1}"#, "bad isUpgraded: expected a boolean, found a number"),
        (#"{"quantity":"1"}"#, "bad quantity: expected an integer, found a string"),
        (#"{"renewalPrice":true}"#, "bad renewalPrice: expected an integer, found a boolean"),
        (#"{"autoRenewStatus":1.5}"#, "bad autoRenewStatus: expected an integer, found 1.5"),
        (#"{"isInBillingRetryPeriod":"false"}"#, "bad isInBillingRetryPeriod: expected a boolean, found a string"),
    ])
    func otherRefusals(json: String, reason: String) {
        let failure = refusal(json, TransactionPayload.init(json:))
            ?? refusal(json, RenewalInfoPayload.init(json:))
        #expect(failure?.description == reason)
        #expect(failure?.code == .invalidValue)
    }
}
