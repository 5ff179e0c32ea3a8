import Foundation
import GooglePlay
import StoreModel
import Testing

private let source = SnapshotSource(kind: "notification", reference: "136969346945", event: "VOIDED_PURCHASE")
private let usd999 = Money(minorUnits: 999, currency: "USD")
private let voidedAt = Play.fetchedAt.addingTimeInterval(-3600)
private let fullVoid = VoidedOrder(orderID: Play.orderID, voidedAt: voidedAt, refundType: 1, reason: "CHARGEBACK")

private func order(_ changes: Changes = [:], id: String = Play.orderID) throws -> GooglePlayOrder {
    try GooglePlayOrder(json: Play.order(changes, id: id))
}

/// The refunds of `voided` orders of `Play.oldToken`'s lineage, whose tokens the mirror knows: `Play.oldToken`
/// (the one Google no longer answers for) and `Play.token`.
private func refunds(_ orders: [GooglePlayOrder], voided: [VoidedOrder] = [fullVoid]) throws(GoogleSnapshotError)
    -> StoreRefundUpdate
{
    try GoogleSnapshotTranslator.refunds(lineage: Play.oldToken, purchaseToken: Play.oldToken, orders: orders, voided: voided,
                                         knownTokens: [Play.oldToken, Play.token], source: source, fetchedAt: Play.fetchedAt)
}

private func refusal(_ orders: [GooglePlayOrder], voided: [VoidedOrder] = [fullVoid]) -> GoogleSnapshotError.Code? {
    do throws(GoogleSnapshotError) {
        _ = try refunds(orders, voided: voided)
        return nil
    } catch {
        return error.code
    }
}

/// Guards `GoogleSnapshotTranslator.refunds`: the refund-only translation of voided orders whose purchase token
/// Google no longer answers for — the same amount rule as a snapshot's refunds, only for the voided orders, only
/// for orders of the lineage's tokens, and nothing for an order that took no money.
@Suite("Google refund-only translator")
struct GoogleRefundTranslatorTests {
    @Test("a voided order the order shows unrefunded is refunded in full at the voided time, with the record's reason")
    func voidedWhole() throws {
        let update = try refunds([try order()])
        #expect(update.store == .google && update.lineage == Play.oldToken)
        #expect(update.asOf == Play.fetchedAt && update.source == source)
        #expect(update.refunds == [StoreRefundUpdate.Refund(
            transactionID: Play.orderID, refund: StoreRefund(amount: usd999, refundedAt: voidedAt, kind: "full", reason: "CHARGEBACK"))])
    }

    @Test("the order's own refund history gives the amount, as in a snapshot", arguments: [
        (#"{"state":"REFUNDED","orderHistory":{"refundEvent":{"eventTime":"2025-05-21T10:00:00Z","refundReason":"OTHER"}}}"#,
         StoreRefund(amount: Money(minorUnits: 999, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_821_600),
                     kind: "full", reason: "OTHER")),
        (#"""
         {"state":"PARTIALLY_REFUNDED","orderHistory":{"partialRefundEvents":[{"createTime":"2025-05-21T10:00:00Z",
          "processTime":"2025-05-21T11:00:00Z","state":"PROCESSED_SUCCESSFULLY",
          "refundDetails":{"total":{"currencyCode":"USD","units":"3"}}}]}}
         """#,
         StoreRefund(amount: Money(minorUnits: 300, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_825_200),
                     kind: "partial", reason: "CHARGEBACK")),
    ])
    func orderHistory(changes: String, refund: StoreRefund) throws {
        #expect(try refunds([try order(Play.changes(changes))]).refunds.map(\.refund) == [refund])
    }

    @Test("one refund per order, in order id order: a void of the whole order wins over a partial one")
    func onePerOrder() throws {
        let partial = VoidedOrder(orderID: Play.orderID, voidedAt: voidedAt.addingTimeInterval(60), refundType: 2)
        let renewal = VoidedOrder(orderID: Play.renewalOrderID, voidedAt: voidedAt)
        let update = try refunds([try order(id: Play.renewalOrderID), try order()], voided: [renewal, partial, fullVoid])
        #expect(update.refunds.map(\.transactionID) == [Play.orderID, Play.renewalOrderID])
        #expect(update.refunds.map(\.refund.kind) == ["full", "full"])
        #expect(update.refunds.first?.refund.refundedAt == voidedAt)
    }

    @Test("an order of another token of the lineage is refunded; one of a token the lineage never had is refused")
    func tokens() throws {
        #expect(try refunds([try order(["purchaseToken": Play.oldToken])]).refunds.count == 1)
        #expect(refusal([try order(["purchaseToken": "someone-elses-token"])]) == .orderMismatch)
    }

    @Test("an order that took no money refunds nothing", arguments: [
        #"{"state":"CANCELED"}"#, #"{"state":"PENDING"}"#, #"{"total":{"currencyCode":"USD","units":"0"}}"#,
    ])
    func noMoney(changes: String) throws {
        #expect(try refunds([try order(Play.changes(changes))]).refunds.isEmpty)
    }

    @Test("a voided order without its orders.get answer, or with an unreadable one, is refused rather than guessed")
    func refused() throws {
        #expect(refusal([]) == .missingField)
        #expect(refusal([try order(["total": nil])]) == .missingField)
        #expect(refusal([try order()], voided: [VoidedOrder(orderID: Play.orderID, voidedAt: voidedAt, refundType: 2)])
                == .unsupportedValue)
        #expect(refusal([try order(["state": "FROZEN"])]) == .unsupportedValue)
    }
}
