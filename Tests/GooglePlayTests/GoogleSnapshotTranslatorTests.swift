import Foundation
import GooglePlay
import StoreModel
import Testing

private let source = SnapshotSource(kind: "notification", reference: "136969346945", event: "SUBSCRIPTION_PURCHASED")

private func purchase(_ changes: Changes = [:], lineItems: [[String: Any]]? = nil) throws -> SubscriptionPurchaseV2 {
    try SubscriptionPurchaseV2(json: Play.subscription(changes, lineItems: lineItems))
}

private func order(_ changes: Changes = [:], id: String = Play.orderID, periodStart: Date = Play.started) throws -> GooglePlayOrder {
    try GooglePlayOrder(json: Play.order(changes, id: id, periodStart: periodStart))
}

private func translate(_ subscription: SubscriptionPurchaseV2, orders: [GooglePlayOrder] = [], voided: [VoidedOrder] = [],
                       lineage: String = Play.token, replaced: [String] = [], at fetchedAt: Date = Play.fetchedAt)
    throws(GoogleSnapshotError) -> GoogleSnapshotResult
{
    try GoogleSnapshotTranslator.snapshot(lineage: lineage, purchaseToken: Play.token, subscription: subscription, orders: orders,
                                          voided: voided, replacedTokens: replaced, source: source, fetchedAt: fetchedAt)
}

private func snapshot(_ subscription: SubscriptionPurchaseV2, orders: [GooglePlayOrder] = [], voided: [VoidedOrder] = [],
                      lineage: String = Play.token, replaced: [String] = []) throws -> StoreSnapshot {
    try #require(try translate(subscription, orders: orders, voided: voided, lineage: lineage, replaced: replaced).snapshot)
}

/// Why the translation is refused, or nil when it succeeds.
private func refusal(_ subscription: SubscriptionPurchaseV2, orders: [GooglePlayOrder] = [], voided: [VoidedOrder] = [])
    -> GoogleSnapshotError?
{
    do throws(GoogleSnapshotError) {
        _ = try translate(subscription, orders: orders, voided: voided)
        return nil
    } catch {
        return error
    }
}

/// The one charge of `snapshot`.
private func onlyCharge(_ snapshot: StoreSnapshot) throws -> StoreCharge {
    #expect(snapshot.charges.count == 1)
    return try #require(snapshot.charges.first)
}

private let usd999 = Money(minorUnits: 999, currency: "USD")

/// What a `subscriptionState` must become.
enum ExpectedState: Sendable, Equatable {
    case mirrored(StoreState, autoRenew: Bool)
    case pending
    case refused(GoogleSnapshotError.Code)
}

/// Guards `GoogleSnapshotTranslator`: how Google's subscription, orders and voided records become a `StoreSnapshot` —
/// state, environment, product and base plan, account token, acknowledgement, and the exact money of every charge and
/// refund. Inputs are Google-shaped JSON decoded by the real decoders; the translation itself is pure.
@Suite("Google snapshot translator")
struct GoogleSnapshotTranslatorTests {
    @Test("a paid, active, auto-renewing production purchase")
    func paidActive() throws {
        let subscription = try purchase()
        let snapshot = try snapshot(subscription, orders: [try order()])
        #expect(snapshot.store == .google)
        #expect(snapshot.lineage == Play.token)
        #expect(snapshot.environment == .production)
        #expect(snapshot.productID == Play.monthly)
        #expect(snapshot.basePlanID == Play.basePlan)
        #expect(snapshot.state == .active)
        #expect(snapshot.periodStart == Play.started)
        #expect(snapshot.expiresAt == Play.expires)
        #expect(snapshot.graceEndsAt == nil)
        #expect(snapshot.autoRenew)
        #expect(!snapshot.inFreeTrial)
        #expect(snapshot.ownership == .purchased)
        #expect(snapshot.accountToken == Play.accountToken)
        #expect(snapshot.charges == [StoreCharge(transactionID: Play.orderID, productID: Play.monthly, amount: usd999,
                                                 chargedAt: Play.started, periodStart: Play.started, periodEnd: Play.expires,
                                                 reason: "purchase", refund: nil)])
        #expect(snapshot.replacedTokens.isEmpty)
        #expect(snapshot.needsAcknowledgement)
        #expect(!snapshot.refundsReversible, "a voided order is final whenever it is seen")
        #expect(snapshot.asOf == Play.fetchedAt)
        #expect(snapshot.source == source)
        #expect(snapshot.raw == Play.text(subscription.json))
        #expect(!snapshot.raw.contains("\n"))
        #expect(snapshot.raw.contains(#""futureField":{"kept":true}"#))
    }

    static let states: [(String, Bool, TimeInterval, ExpectedState)] = [
        ("SUBSCRIPTION_STATE_ACTIVE", true, 86_400, .mirrored(.active, autoRenew: true)),
        ("SUBSCRIPTION_STATE_ACTIVE", false, 86_400, .mirrored(.active, autoRenew: false)),
        ("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", true, 86_400, .mirrored(.grace, autoRenew: true)),
        ("SUBSCRIPTION_STATE_ON_HOLD", true, -86_400, .mirrored(.onHold, autoRenew: true)),
        ("SUBSCRIPTION_STATE_PAUSED", true, -86_400, .mirrored(.paused, autoRenew: true)),
        ("SUBSCRIPTION_STATE_CANCELED", false, 86_400, .mirrored(.active, autoRenew: false)),
        ("SUBSCRIPTION_STATE_CANCELED", true, 1, .mirrored(.active, autoRenew: false)),
        ("SUBSCRIPTION_STATE_CANCELED", false, 0, .mirrored(.expired, autoRenew: false)),
        ("SUBSCRIPTION_STATE_CANCELED", false, -1, .mirrored(.expired, autoRenew: false)),
        ("SUBSCRIPTION_STATE_EXPIRED", false, -86_400, .mirrored(.expired, autoRenew: false)),
        ("SUBSCRIPTION_STATE_PENDING", false, 86_400, .pending),
        ("SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED", false, -86_400, .pending),
        ("SUBSCRIPTION_STATE_UNSPECIFIED", true, 86_400, .refused(.unknownState)),
        ("SUBSCRIPTION_STATE_FROZEN", true, 86_400, .refused(.unknownState)),
    ]

    @Test("subscriptionState, auto-renew and expiry decide the store state", arguments: states)
    func state(name: String, autoRenewEnabled: Bool, expiresIn: TimeInterval, expected: ExpectedState) throws {
        let subscription = try purchase(["subscriptionState": name], lineItems: [Play.lineItem([
            "expiryTime": Play.time(Play.fetchedAt.addingTimeInterval(expiresIn)),
            "autoRenewingPlan": ["autoRenewEnabled": autoRenewEnabled],
        ])])
        let outcome: ExpectedState
        do throws(GoogleSnapshotError) {
            switch try translate(subscription) {
            case .snapshot(let snapshot):
                outcome = .mirrored(snapshot.state, autoRenew: snapshot.autoRenew)
                #expect(snapshot.graceEndsAt == (snapshot.state == .grace ? snapshot.expiresAt : nil))
            case .pending(let state):
                #expect(state == name)
                outcome = .pending
            }
        } catch {
            outcome = .refused(error.code)
            #expect(error.message.contains(name))
        }
        #expect(outcome == expected)
    }

    @Test("a pending purchase with no line item or start yet is still only pending")
    func pendingWithoutItems() throws {
        let subscription = try purchase(["subscriptionState": "SUBSCRIPTION_STATE_PENDING", "startTime": nil], lineItems: [])
        guard case .pending = try translate(subscription) else {
            Issue.record("a pending purchase was mirrored")
            return
        }
    }

    @Test("a licence tester's purchase is Sandbox; whether it needs acknowledging follows its state, as others'", arguments: [
        ("ACKNOWLEDGEMENT_STATE_PENDING", false, StoreEnvironment.production, true),
        ("ACKNOWLEDGEMENT_STATE_PENDING", true, .sandbox, true),
        ("ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", false, .production, false),
        ("ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", true, .sandbox, false),
        (nil, false, .production, false),
    ] as [(String?, Bool, StoreEnvironment, Bool)])
    func environmentAndAcknowledgement(state: String?, test: Bool, environment: StoreEnvironment, needsAcknowledgement: Bool) throws {
        var changes: Changes = ["acknowledgementState": state]
        if test { changes["testPurchase"] = [String: String]() }
        let snapshot = try snapshot(try purchase(changes))
        #expect(snapshot.environment == environment)
        #expect(snapshot.needsAcknowledgement == needsAcknowledgement)
    }

    @Test("product and base plan come from the longest-running line item, never from elsewhere")
    func productAndBasePlan() throws {
        let addOn = Play.lineItem(["productId": Play.addOn, "expiryTime": Play.time(Play.expires.addingTimeInterval(-86_400)),
                                   "offerDetails": ["basePlanId": "storage-monthly"], "latestSuccessfulOrderId": nil])
        let yearly = Play.lineItem(["productId": "com.example.storesync.yearly",
                                    "expiryTime": Play.time(Play.started.addingTimeInterval(365 * 86_400)),
                                    "offerDetails": ["basePlanId": "yearly-autorenew", "offerId": "intro"]])
        let snapshot = try snapshot(try purchase(lineItems: [addOn, yearly]))
        #expect(snapshot.productID == "com.example.storesync.yearly")
        #expect(snapshot.basePlanID == "yearly-autorenew")
        #expect(snapshot.expiresAt == Play.started.addingTimeInterval(365 * 86_400))
    }

    @Test("a free trial is mirrored as such while active")
    func freeTrial() throws {
        let snapshot = try snapshot(try purchase(lineItems: [Play.lineItem(["offerPhase": ["freeTrial": [String: String]()]])]))
        #expect(snapshot.inFreeTrial)
        #expect(snapshot.state == .active)
    }

    @Test("the account token is obfuscatedExternalAccountId, or the expired purchase's for a Play-store resubscription")
    func accountToken() throws {
        #expect(try snapshot(try purchase(["externalAccountIdentifiers": nil])).accountToken == nil)
        #expect(try snapshot(try purchase(["externalAccountIdentifiers": ["obfuscatedExternalAccountId": ""]])).accountToken == nil)
        let resubscribed = try purchase([
            "externalAccountIdentifiers": nil,
            "outOfAppPurchaseContext": ["expiredPurchaseToken": Play.oldToken,
                                        "expiredExternalAccountIdentifiers": ["obfuscatedExternalAccountId": "acct-9"]],
        ])
        #expect(try snapshot(resubscribed).accountToken == "acct-9")
    }

    @Test("the lineage and the replaced tokens are the caller's; their orders belong to the lineage")
    func lineage() throws {
        let old = try order(["purchaseToken": Play.oldToken], id: "GPA.1111-2222-3333-44444",
                            periodStart: Play.started.addingTimeInterval(-40 * 86_400))
        let snapshot = try snapshot(try purchase(["linkedPurchaseToken": Play.oldToken]), orders: [try order(), old],
                                    lineage: Play.oldToken, replaced: [Play.oldToken])
        #expect(snapshot.lineage == Play.oldToken)
        #expect(snapshot.replacedTokens == [Play.oldToken])
        #expect(snapshot.charges.map(\.transactionID) == ["GPA.1111-2222-3333-44444", Play.orderID])
    }

    @Test("an order of another purchase token is refused")
    func foreignOrder() throws {
        let error = refusal(try purchase(), orders: [try order(["purchaseToken": "someone-elses-token"])])
        #expect(error?.code == .orderMismatch)
    }

    @Test("the charge is the order's total exactly", arguments: [
        ("USD", "9", Int32(990_000_000), Int64(999)),
        ("JPY", "1200", 0, 1200),
        ("KWD", "3", 125_000_000, 3125),
        ("EUR", "0", 990_000_000, 99),
        ("USD", "92233720368547758", 70_000_000, Int64.max),
    ])
    func chargeAmount(currency: String, units: String, nanos: Int32, minorUnits: Int64) throws {
        let snapshot = try snapshot(try purchase(), orders: [try order(["total": ["currencyCode": currency, "units": units, "nanos": nanos]])])
        #expect(try onlyCharge(snapshot).amount == Money(minorUnits: minorUnits, currency: currency))
    }

    @Test("a total that is not exact, positive money fails the snapshot", arguments: [
        (#"{"currencyCode":"USD","units":"-1","nanos":-750000000}"#, "negative"),
        (#"{"currencyCode":"USD","units":"1","nanos":-750000000}"#, "sign"),
        (#"{"units":"9","nanos":990000000}"#, "currencyCode"),
        (#"{"currencyCode":"USD","units":"92233720368547759"}"#, "out of range"),
    ])
    func invalidTotal(total: String, fragment: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(total.utf8))
        let error = refusal(try purchase(), orders: [try order(["total": value as? [String: Any]])])
        #expect(error?.code == .invalidMoney)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "accepted")")
        #expect(error?.message.contains(Play.orderID) == true)
    }

    @Test("orders that took no money book nothing", arguments: [
        #"{"state":"PENDING"}"#, #"{"state":"CANCELED"}"#, #"{"total":{"currencyCode":"USD"}}"#,
        #"{"total":{"currencyCode":"USD","units":"0","nanos":0}}"#,
    ])
    func noCharge(changes: String) throws {
        #expect(try snapshot(try purchase(), orders: [try order(Play.changes(changes))]).charges.isEmpty)
    }

    @Test("an order in a state this version does not know fails rather than books a guess")
    func unknownOrderState() throws {
        let error = refusal(try purchase(), orders: [try order(["state": "DISPUTED"])])
        #expect(error?.code == .unsupportedValue)
        #expect(error?.message.contains("DISPUTED") == true)
    }

    @Test("a renewal's charge is a renewal for its own service period; the same order given twice counts once")
    func renewal() throws {
        let renewed = Play.started.addingTimeInterval(31 * 86_400)
        let renewal = try order(id: Play.renewalOrderID, periodStart: renewed)
        let subscription = try purchase(lineItems: [Play.lineItem(["latestSuccessfulOrderId": Play.renewalOrderID,
                                                                   "expiryTime": Play.time(renewed.addingTimeInterval(31 * 86_400))])])
        let snapshot = try snapshot(subscription, orders: [renewal, try order(), renewal])
        #expect(snapshot.charges.map(\.transactionID) == [Play.orderID, Play.renewalOrderID])
        #expect(snapshot.charges.map(\.reason) == ["purchase", "renewal"])
        #expect(snapshot.charges.last?.periodStart == renewed)
        #expect(snapshot.periodStart == renewed)
    }

    @Test("without the current order the period start is unknown")
    func periodStartUnknown() throws {
        #expect(try snapshot(try purchase()).periodStart == nil)
    }

    @Test("a voided order is refunded in full at the voided time, with Google's reason")
    func voidedFull() throws {
        let voidedAt = Play.fetchedAt.addingTimeInterval(-3600)
        let listed = VoidedOrder(VoidedPurchase(purchaseToken: Play.token, orderId: Play.orderID,
                                                voidedTimeMillis: Int64(voidedAt.timeIntervalSince1970 * 1000), voidedReason: 7),
                                 listedBy: Play.fetchedAt)
        let listedSnapshot = try snapshot(try purchase(), orders: [try order()], voided: [try #require(listed)])
        #expect(try onlyCharge(listedSnapshot).refund == StoreRefund(amount: usd999, refundedAt: voidedAt, kind: "full",
                                                                 reason: "CHARGEBACK"))
        let notified = VoidedOrder(VoidedPurchaseNotification(purchaseToken: Play.token, orderId: Play.orderID, productType: 1,
                                                              refundType: 1), eventTime: voidedAt)
        #expect(try onlyCharge(try snapshot(try purchase(), orders: [try order()], voided: [notified])).refund?.amount == usd999)
    }

    @Test("the order's own refund history gives the exact refund", arguments: [
        ("full refund event with details", #"""
         {"state":"REFUNDED","orderHistory":{"refundEvent":{"eventTime":"2025-05-21T10:00:00Z","refundReason":"CHARGEBACK",
          "refundDetails":{"total":{"currencyCode":"USD","units":"9","nanos":990000000}}}}}
         """#, StoreRefund(amount: Money(minorUnits: 999, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_821_600),
                           kind: "full", reason: "CHARGEBACK")),
        ("full refund event without details", #"""
         {"state":"REFUNDED","orderHistory":{"refundEvent":{"eventTime":"2025-05-21T10:00:00Z","refundReason":"OTHER"}}}
         """#, StoreRefund(amount: Money(minorUnits: 999, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_821_600),
                           kind: "full", reason: "OTHER")),
        ("processed partial refunds add up; a pending one does not count", #"""
         {"state":"PARTIALLY_REFUNDED","orderHistory":{"partialRefundEvents":[
          {"createTime":"2025-05-21T10:00:00Z","processTime":"2025-05-21T10:00:00Z","state":"PROCESSED_SUCCESSFULLY",
           "refundDetails":{"total":{"currencyCode":"USD","units":"2","nanos":500000000}}},
          {"createTime":"2025-05-21T11:00:00Z","processTime":"2025-05-21T12:00:00Z","state":"PROCESSED_SUCCESSFULLY",
           "refundDetails":{"total":{"currencyCode":"USD","units":"1"}}},
          {"createTime":"2025-05-21T13:00:00Z","state":"PENDING","refundDetails":{"total":{"currencyCode":"USD","units":"5"}}}]}}
         """#, StoreRefund(amount: Money(minorUnits: 350, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_828_800),
                           kind: "partial", reason: nil)),
        ("partial refunds of the whole amount are a full refund", #"""
         {"state":"REFUNDED","orderHistory":{"partialRefundEvents":[
          {"processTime":"2025-05-21T10:00:00Z","state":"PROCESSED_SUCCESSFULLY",
           "refundDetails":{"total":{"currencyCode":"USD","units":"4","nanos":990000000}}},
          {"processTime":"2025-05-21T12:00:00Z","state":"PROCESSED_SUCCESSFULLY",
           "refundDetails":{"total":{"currencyCode":"USD","units":"5"}}}]}}
         """#, StoreRefund(amount: Money(minorUnits: 999, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_828_800),
                           kind: "full", reason: nil)),
        ("refunded without an event: at the last event", #"{"state":"REFUNDED","lastEventTime":"2025-05-21T10:00:00Z"}"#,
         StoreRefund(amount: Money(minorUnits: 999, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_821_600),
                     kind: "full", reason: nil)),
        ("the rest refunded after a partial refund: the whole order, not the full refund's own amount", #"""
         {"state":"REFUNDED","orderHistory":{"partialRefundEvents":[
          {"processTime":"2025-05-21T10:00:00Z","state":"PROCESSED_SUCCESSFULLY",
           "refundDetails":{"total":{"currencyCode":"USD","units":"3"}}}],
          "refundEvent":{"eventTime":"2025-05-21T12:00:00Z","refundReason":"OTHER",
           "refundDetails":{"total":{"currencyCode":"USD","units":"6","nanos":990000000}}}}}
         """#, StoreRefund(amount: Money(minorUnits: 999, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_828_800),
                           kind: "full", reason: "OTHER")),
        ("a full refund after a partial one that gives the whole amount itself is still the order's total", #"""
         {"state":"REFUNDED","orderHistory":{"partialRefundEvents":[
          {"processTime":"2025-05-21T10:00:00Z","state":"PROCESSED_SUCCESSFULLY",
           "refundDetails":{"total":{"currencyCode":"USD","units":"3"}}}],
          "refundEvent":{"eventTime":"2025-05-21T12:00:00Z",
           "refundDetails":{"total":{"currencyCode":"USD","units":"9","nanos":990000000}}}}}
         """#, StoreRefund(amount: Money(minorUnits: 999, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_828_800),
                           kind: "full", reason: nil)),
        ("refunded with partial refunds short of the total: the whole order, at the last event", #"""
         {"state":"REFUNDED","lastEventTime":"2025-05-21T12:00:00Z","orderHistory":{"partialRefundEvents":[
          {"processTime":"2025-05-21T10:00:00Z","state":"PROCESSED_SUCCESSFULLY",
           "refundDetails":{"total":{"currencyCode":"USD","units":"3"}}}]}}
         """#, StoreRefund(amount: Money(minorUnits: 999, currency: "USD"), refundedAt: Date(timeIntervalSince1970: 1_747_828_800),
                           kind: "full", reason: nil)),
    ] as [(String, String, StoreRefund)])
    func orderRefund(name: String, changes: String, refund: StoreRefund) throws {
        #expect(try onlyCharge(try snapshot(try purchase(), orders: [try order(Play.changes(changes))])).refund == refund)
    }

    @Test("a partial void without the order's refund amounts, or refunds beyond the charge, fail rather than guess")
    func refundRefused() throws {
        let partial = VoidedOrder(orderID: Play.orderID, voidedAt: Play.fetchedAt, refundType: 2)
        #expect(refusal(try purchase(), orders: [try order()], voided: [partial])?.code == .unsupportedValue)

        let tooMuch = try order(["orderHistory": ["refundEvent": [
            "eventTime": "2025-05-21T10:00:00Z", "refundDetails": ["total": ["currencyCode": "USD", "units": "10"]]]]])
        #expect(refusal(try purchase(), orders: [tooMuch])?.code == .invalidMoney)
        let otherCurrency = try order(["orderHistory": ["refundEvent": [
            "eventTime": "2025-05-21T10:00:00Z", "refundDetails": ["total": ["currencyCode": "EUR", "units": "1"]]]]])
        #expect(refusal(try purchase(), orders: [otherCurrency])?.code == .invalidMoney)
    }

    @Test("a void of the whole order wins over a partial one of the same order, whichever is later")
    func fullVoidWins() throws {
        let partial = VoidedOrder(orderID: Play.orderID, voidedAt: Play.fetchedAt.addingTimeInterval(-7200), refundType: 2)
        let full = VoidedOrder(orderID: Play.orderID, voidedAt: Play.fetchedAt.addingTimeInterval(-3600), refundType: 1)
        let laterPartial = VoidedOrder(orderID: Play.orderID, voidedAt: Play.fetchedAt.addingTimeInterval(-60), refundType: 2)
        for voided in [[full, partial], [partial, full], [full, laterPartial]] {
            let refund = try onlyCharge(try snapshot(try purchase(), orders: [try order()], voided: voided)).refund
            #expect(refund == StoreRefund(amount: usd999, refundedAt: full.voidedAt, kind: "full", reason: nil))
        }
    }

    /// A prorated revoke is voided as a whole order yet refunds less: the order's own partial refunds decide,
    /// since a refund booked too high is never lowered. A void finds the order showing no refund yet (its
    /// history lagging): then it refunds the total.
    @Test("the order's own refunds beat a void of the whole order; a void alone refunds the total")
    func orderRefundsBeatAWholeOrderVoid() throws {
        let partlyRefunded = try order(Play.changes(#"""
            {"state":"PARTIALLY_REFUNDED","orderHistory":{"partialRefundEvents":[
             {"processTime":"2025-05-21T10:00:00Z","state":"PROCESSED_SUCCESSFULLY",
              "refundDetails":{"total":{"currencyCode":"USD","units":"3"}}}]}}
            """#))
        #expect(try onlyCharge(try snapshot(try purchase(), orders: [partlyRefunded])).refund?.amount
                == Money(minorUnits: 300, currency: "USD"))
        let full = VoidedOrder(orderID: Play.orderID, voidedAt: Play.fetchedAt, refundType: 1, reason: "REMORSE")
        #expect(try onlyCharge(try snapshot(try purchase(), orders: [partlyRefunded], voided: [full])).refund?.amount
                == Money(minorUnits: 300, currency: "USD"))
        #expect(try onlyCharge(try snapshot(try purchase(), orders: [try order()], voided: [full])).refund
                == StoreRefund(amount: usd999, refundedAt: Play.fetchedAt, kind: "full", reason: "REMORSE"))
    }

    @Test("answers missing what the snapshot needs are refused with the field", arguments: [
        ("no state", { @Sendable in try purchase(["subscriptionState": nil]) }, "subscriptionState"),
        ("no line items", { @Sendable in try purchase(lineItems: []) }, "lineItems"),
        ("no product", { @Sendable in try purchase(lineItems: [Play.lineItem(["productId": nil])]) }, "productId"),
        ("cancelled without expiry", { @Sendable in
            try purchase(["subscriptionState": "SUBSCRIPTION_STATE_CANCELED"], lineItems: [Play.lineItem(["expiryTime": nil])])
        }, "expiryTime"),
    ] as [(String, @Sendable () throws -> SubscriptionPurchaseV2, String)])
    func missing(name: String, subscription: @Sendable () throws -> SubscriptionPurchaseV2, fragment: String) throws {
        let error = refusal(try subscription())
        #expect(error?.code == .missingField)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "accepted")")
    }

    @Test("an order without its creation time or total is refused", arguments: ["createTime", "total", "state", "orderId"])
    func orderMissing(field: String) throws {
        let error = refusal(try purchase(), orders: [try order([field: nil])])
        #expect(error?.code == .missingField)
        #expect(error?.message.contains(field) == true, "\(error?.message ?? "accepted")")
    }
}
