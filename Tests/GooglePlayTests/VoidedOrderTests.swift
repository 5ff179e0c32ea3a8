import Foundation
import GooglePlay
import Testing

/// Guards what a voided purchases list record becomes for the snapshot translator: the order, when it was voided
/// (never undated), whether only part of it was, and Google's reason by name.
@Suite("Voided order from a list record")
struct VoidedOrderTests {
    static let listedBy = Date(timeIntervalSince1970: 1_748_000_100)

    @Test("the record's own voided time and reason are kept")
    func timeAndReason() throws {
        let record = VoidedPurchase(purchaseToken: "tok-1", orderId: "GPA.1111-2222-3333-44444..2",
                                    voidedTimeMillis: 1_748_000_000_250, voidedReason: 6)
        let order = try #require(VoidedOrder(record, listedBy: Self.listedBy))
        #expect(order.orderID == "GPA.1111-2222-3333-44444..2")
        #expect(order.voidedAt == Date(timeIntervalSince1970: 1_748_000_000.25))
        #expect(order.reason == "FRIENDLY_FRAUD")
        #expect(order.refundType == nil && !order.isPartial)
    }

    @Test("a record without its voided time is dated by the end of the window that listed it, not 1970")
    func undatedRecord() throws {
        let record = VoidedPurchase(purchaseToken: "tok-1", orderId: "GPA.1111-2222-3333-44444", voidedTimeMillis: nil,
                                    voidedReason: 1)
        let order = try #require(VoidedOrder(record, listedBy: Self.listedBy))
        #expect(order.voidedAt == Self.listedBy)
        #expect(order.reason == "REMORSE")
    }

    @Test("a reason Google does not document is kept as its number; none stays none")
    func unknownReason() throws {
        let unknown = VoidedPurchase(purchaseToken: "tok-1", orderId: "GPA.1", voidedTimeMillis: 1, voidedReason: 42)
        #expect(VoidedOrder(unknown, listedBy: Self.listedBy)?.reason == "42")
        let none = VoidedPurchase(purchaseToken: "tok-1", orderId: "GPA.1", voidedTimeMillis: 1)
        #expect(VoidedOrder(none, listedBy: Self.listedBy)?.reason == nil)
    }

    @Test("a quantity-based record is partial")
    func quantity() {
        let record = VoidedPurchase(purchaseToken: "tok-1", orderId: "GPA.1", voidedTimeMillis: 1, voidedQuantity: 1)
        #expect(VoidedOrder(record, listedBy: Self.listedBy)?.isPartial == true)
    }

    @Test("a record without an order id names no charge", arguments: [nil, ""] as [String?])
    func noOrder(orderID: String?) {
        let record = VoidedPurchase(purchaseToken: "tok-1", orderId: orderID, voidedTimeMillis: 1)
        #expect(VoidedOrder(record, listedBy: Self.listedBy) == nil)
    }
}
