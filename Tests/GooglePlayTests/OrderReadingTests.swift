import Foundation
import GooglePlay
import StrictJSON
import Testing

private func order(_ json: String) throws -> GooglePlayOrder {
    try GooglePlayOrder(json: Data(json.utf8))
}

private func voided(_ json: String) throws -> VoidedPurchase {
    try JSONReader.read(Data(json.utf8), VoidedPurchase.init(json:))
}

/// Guards how orders and voided purchase records read Google's JSON: nested refund history and money with its
/// lenient integers, unknown fields skipped, and a field of the wrong kind refused with its full path.
@Suite("Order and voided purchase reading")
struct OrderReadingTests {
    @Test("a nested refund history reads whole, times to the microsecond, unknown fields skipped")
    func refundHistory() throws {
        let read = try order(#"""
            {"orderId":"GPA.1","state":"REFUNDED","buyerAddress":{"buyerCountry":"US"},"pointsDetails":{"x":[1]},
             "total":{"currencyCode":"USD","units":9,"nanos":"990000000"},"orderDetails":{"taxInclusive":false},
             "orderHistory":{
               "processedEvent":{"eventTime":"2025-05-20T10:00:00Z"},
               "refundEvent":{"eventTime":"2025-05-21T10:00:00.123456789Z","refundReason":"CHARGEBACK",
                              "refundDetails":{"total":{"currencyCode":"USD","units":"9","nanos":990000000},"futureAmount":{}}},
               "partialRefundEvents":[{"createTime":"2025-05-20T11:00:00+01:00","state":"PENDING"}]},
             "lineItems":[{"productId":"p","subscriptionDetails":{"basePlanId":"b","servicePeriodEndTime":"2025-06-20T10:00:00Z"}}]}
            """#)
        #expect(read.orderId == "GPA.1" && read.state == "REFUNDED")
        #expect(read.total == GooglePlayMoney(currencyCode: "USD", units: 9, nanos: 990_000_000))
        #expect(read.orderDetails?.taxInclusive == false)
        #expect(read.orderHistory?.processedEvent?.eventTime == Date(timeIntervalSince1970: 1_747_735_200))
        #expect(read.orderHistory?.refundEvent?.eventTime == Date(timeIntervalSince1970: 1_747_821_600.123456))
        #expect(read.orderHistory?.refundEvent?.refundReason == "CHARGEBACK")
        #expect(read.orderHistory?.refundEvent?.refundDetails?.total == GooglePlayMoney(currencyCode: "USD", units: 9,
                                                                                        nanos: 990_000_000))
        #expect(read.orderHistory?.partialRefundEvents?.first?.createTime == Date(timeIntervalSince1970: 1_747_735_200))
        #expect(read.lineItems?.first?.subscriptionDetails?.servicePeriodEndTime == Date(timeIntervalSince1970: 1_750_413_600))
    }

    @Test("a field of the wrong kind is refused with its full path", arguments: [
        (#"{"orderHistory":{"partialRefundEvents":[{},{"refundDetails":{"total":{"units":true}}}]}}"#,
         "bad orderHistory.partialRefundEvents[1].refundDetails.total.units: expected an integer or a decimal string, found a boolean"),
        (#"{"lineItems":[{"subscriptionDetails":{"servicePeriodEndTime":"2025-06-20"}}]}"#,
         #"bad lineItems[0].subscriptionDetails.servicePeriodEndTime: expected an RFC 3339 time, found "2025-06-20""#),
        (#"{"orderDetails":{"taxInclusive":"true"}}"#, "bad orderDetails.taxInclusive: expected a boolean, found a string"),
        (#"{"tax":{"nanos":1.5}}"#, "bad tax.nanos: expected an integer, found 1.5"),
        (#"{"orderHistory":{"refundEvent":{"eventTime":null,"refundReason":3}}}"#,
         "bad orderHistory.refundEvent.refundReason: expected a string, found a number"),
        (#"{"createTime":"2025-05-20T10:00:00"}"#, #"bad createTime: expected an RFC 3339 time, found "2025-05-20T10:00:00""#),
        (#"{"orderId":"GPA.1","orderId":12}"#, "bad orderId: expected a string, found a number"),
    ])
    func refusedOrders(json: String, message: String) {
        let error = #expect(throws: JSONReaderError.self) { try order(json) }
        #expect(error?.description == message, "\(error.map(String.init(describing:)) ?? "accepted")")
    }

    @Test("voided purchase numbers come as strings or numbers", arguments: [
        #"{"orderId":"GPA.1","voidedTimeMillis":"1747735200000","purchaseTimeMillis":"1747000000000","voidedSource":"2","voidedReason":"7","voidedQuantity":"1"}"#,
        #"{"orderId":"GPA.1","voidedTimeMillis":1747735200000,"purchaseTimeMillis":1.747e12,"voidedSource":2,"voidedReason":7,"voidedQuantity":1,"kind":"androidpublisher#voidedPurchase"}"#,
    ])
    func voidedNumbers(json: String) throws {
        let record = try voided(json)
        #expect(record.orderId == "GPA.1")
        #expect(record.voidedTimeMillis == 1_747_735_200_000 && record.purchaseTimeMillis == 1_747_000_000_000)
        #expect(record.voidedSource == 2 && record.voidedReason == 7 && record.voidedQuantity == 1)
    }

    @Test("a voided purchase field that is not an integer is refused with its name", arguments: [
        (#"{"voidedTimeMillis":"1747735200000.5"}"#, "bad voidedTimeMillis: expected an integer (Int64) as a decimal string"),
        (#"{"voidedReason":7.5}"#, "bad voidedReason: expected an integer, found 7.5"),
        (#"{"voidedQuantity":"lots"}"#, #"bad voidedQuantity: expected an integer (Int) as a decimal string of at most 24 bytes, found "lots""#),
        (#"{"voidedSource":{}}"#, "bad voidedSource: expected an integer or a decimal string, found an object"),
        (#"{"purchaseToken":1}"#, "bad purchaseToken: expected a string, found a number"),
    ])
    func refusedVoided(json: String, message: String) {
        let error = #expect(throws: JSONReaderError.self) { try voided(json) }
        #expect(error?.description.hasPrefix(message) == true, "\(error.map(String.init(describing:)) ?? "accepted")")
    }
}
