import AppStore
import Foundation
import StoreModel
import Testing

private let source = SnapshotSource(kind: "notification", reference: "002e14d5-51f5-4503-b5a8-c3a1af68eb20", event: "DID_RENEW")
private let fetchedAt = utc(2025, 6, 2)
private let verifier = Result { try Verifiers.production() }

private func transaction(_ changes: Changes = [:]) throws -> Verified<TransactionPayload> {
    try verifier.get().verifiedTransaction(try Answers.signed(Answers.transaction(changes)), now: Fixture.now)
}

private func renewal(_ changes: Changes = [:]) throws -> Verified<RenewalInfoPayload> {
    try verifier.get().verifiedRenewalInfo(try Answers.signed(Answers.renewal(changes)), now: Fixture.now)
}

/// A statuses answer whose only entry is `lineage`'s, next to a family member's entry for another lineage.
private func statuses(status: Int = 1, latest: Verified<TransactionPayload>, renewal: Verified<RenewalInfoPayload>?) throws
    -> SubscriptionStatuses
{
    let other = "2000000000000500"
    let family = SubscriptionStatuses.LastTransaction(
        status: 1, originalTransactionID: other,
        transaction: try transaction(["transactionId": other, "originalTransactionId": other, "inAppOwnershipType": "FAMILY_SHARED"]),
        renewalInfo: nil)
    let entry = SubscriptionStatuses.LastTransaction(status: status, originalTransactionID: Answers.lineage, transaction: latest,
                                                     renewalInfo: renewal)
    return SubscriptionStatuses(environment: .production, bundleID: Fixture.bundleID, appAppleID: Fixture.appAppleID,
                                groups: [.init(subscriptionGroupIdentifier: "21000000", lastTransactions: [family, entry])])
}

private func snapshot(status: Int = 1, latest: Changes = [:], renewal renewalChanges: Changes? = [:],
                      history: [Changes] = []) throws -> StoreSnapshot {
    let answer = try statuses(status: status, latest: try transaction(latest), renewal: try renewalChanges.map { try renewal($0) })
    return try AppleSnapshotTranslator.snapshot(lineage: Answers.lineage, statuses: answer,
                                                history: try history.map { try transaction($0) }, source: source,
                                                fetchedAt: fetchedAt)
}

/// The `AppleSnapshotError` code `body` throws.
private func failure(_ body: () throws -> StoreSnapshot) -> (AppleSnapshotError.Code?, String) {
    do {
        _ = try body()
        return (nil, "")
    } catch let error as AppleSnapshotError {
        return (error.code, error.message)
    } catch {
        return (nil, "\(error)")
    }
}

/// Guards `AppleSnapshotTranslator`: how verified App Store answers become a `StoreSnapshot` — state,
/// dates, ownership, account token, and the exact money of every charge and refund. Payloads are signed by
/// the local PKI and verified for real; the translation itself is pure.
@Suite("Apple snapshot translator")
struct AppleSnapshotTranslatorTests {
    @Test("a paid, active, auto-renewing subscription")
    func paidActive() throws {
        let snapshot = try snapshot()
        #expect(snapshot.store == .apple)
        #expect(snapshot.lineage == Answers.lineage)
        #expect(snapshot.environment == .production)
        #expect(snapshot.productID == Answers.monthly)
        #expect(snapshot.basePlanID == nil)
        #expect(snapshot.state == .active)
        #expect(snapshot.periodStart == Answers.purchased)
        #expect(snapshot.expiresAt == Answers.expires)
        #expect(snapshot.graceEndsAt == nil)
        #expect(snapshot.autoRenew)
        #expect(!snapshot.inFreeTrial)
        #expect(snapshot.ownership == .purchased)
        #expect(snapshot.accountToken == Answers.accountToken)
        #expect(snapshot.charges == [StoreCharge(transactionID: Answers.lineage, productID: Answers.monthly,
                                                 amount: Money(minorUnits: 999, currency: "USD"), chargedAt: Answers.purchased,
                                                 periodStart: Answers.purchased, periodEnd: Answers.expires, reason: "purchase",
                                                 refund: nil, seenAt: Fixture.signedDate)])
        #expect(snapshot.replacedTokens.isEmpty)
        #expect(!snapshot.needsAcknowledgement)
        #expect(snapshot.refundsReversible, "Apple reverses refunds; history revisions re-list every refund change")
        #expect(snapshot.asOf == Fixture.signedDate)
        #expect(snapshot.source == source)
    }

    @Test("Apple's status becomes the store state", arguments: [
        (1, StoreState.active), (2, .expired), (3, .onHold), (4, .grace), (5, .revoked),
    ])
    func state(status: Int, state: StoreState) throws {
        #expect(try snapshot(status: status).state == state)
        #expect(try AppleSnapshotTranslator.state(status) == state)
    }

    @Test("a status outside 1...5 is an error", arguments: [0, 6, -1, 99])
    func unknownStatus(status: Int) {
        let (code, message) = failure { try snapshot(status: status) }
        #expect(code == .unknownStatus)
        #expect(message.contains("\(status)"))
    }

    @Test("grace end and auto-renew come from the renewal info", arguments: [
        (4, 0, utc(2025, 6, 26) as Date?), (4, 1, utc(2025, 6, 26)), (1, 1, nil), (2, 0, nil),
    ])
    func renewalFields(status: Int, autoRenew: Int, graceEnds: Date?) throws {
        let snapshot = try snapshot(status: status, renewal: ["autoRenewStatus": autoRenew,
                                                              "gracePeriodExpiresDate": graceEnds.map(milliseconds)])
        #expect(snapshot.graceEndsAt == graceEnds)
        #expect(snapshot.autoRenew == (autoRenew == 1))
    }

    @Test("without renewal info nothing renews")
    func noRenewalInfo() throws {
        let snapshot = try snapshot(renewal: nil)
        #expect(!snapshot.autoRenew)
        #expect(snapshot.graceEndsAt == nil)
    }

    @Test("milliunits become exact minor units of the currency", arguments: [
        (Int64(9990), "USD", Int64(999)), (990, "USD", 99), (12_345, "EUR", 1235), (1_200_000, "JPY", 1200),
        (4_990, "BHD", 4990), (99_990_000, "KRW", 99_990), (5_000_000_000_990, "USD", 500_000_000_099),
    ])
    func money(price: Int64, currency: String, minorUnits: Int64) throws {
        let charges = try snapshot(latest: ["price": price, "currency": currency]).charges
        #expect(charges.map(\.amount) == [Money(minorUnits: minorUnits, currency: currency)])
    }

    @Test("what books nothing", arguments: [
        ("price 0", ["price": 0] as Changes),
        ("no price (before Apple reported prices)", ["price": nil, "currency": nil]),
        ("free trial", ["price": 0, "offerDiscountType": "FREE_TRIAL", "offerType": 1]),
        ("free trial reporting a price", ["offerDiscountType": "FREE_TRIAL", "offerType": 1]),
        ("family shared", ["inAppOwnershipType": "FAMILY_SHARED"]),
    ])
    func noCharge(name: String, changes: Changes) throws {
        #expect(try snapshot(latest: changes).charges.isEmpty)
    }

    @Test("money that is not exact is an error", arguments: [
        ("lowercase currency", ["currency": "usd"] as Changes, "ISO 4217"),
        ("price without currency", ["currency": nil], "no currency"),
        ("negative price", ["price": -990], "negative"),
    ])
    func invalidMoney(name: String, changes: Changes, fragment: String) {
        let (code, message) = failure { try snapshot(latest: changes) }
        #expect(code == .invalidMoney)
        #expect(message.contains(fragment), "\(message)")
    }

    @Test("a revocation becomes the charge's refund", arguments: [
        ("full", ["revocationType": "REFUND_FULL", "revocationReason": 1] as Changes, 999 as Int64, "full", "1" as String?),
        ("no type counts as full", ["revocationReason": 0], 999, "full", "0"),
        ("prorated 25 %", ["revocationType": "REFUND_PRORATED", "revocationPercentage": 25_000], 250, "prorated", nil),
        ("prorated 33.333 %", ["revocationType": "REFUND_PRORATED", "revocationPercentage": 33_333, "revocationReason": 1],
         333, "prorated", "1"),
        ("prorated 100 %", ["revocationType": "REFUND_PRORATED", "revocationPercentage": 100_000], 999, "prorated", nil),
        ("family revoke returns no money", ["revocationType": "FAMILY_REVOKE"], 0, "family_revoke", nil),
    ])
    func refund(name: String, changes: Changes, amount: Int64, kind: String, reason: String?) throws {
        let revoked = utc(2025, 5, 25, 8, 30)
        let charges = try snapshot(status: 5, latest: changes.merging(["revocationDate": milliseconds(revoked)]) { $1 }).charges
        let refund = try #require(charges.first?.refund)
        #expect(refund == StoreRefund(amount: Money(minorUnits: amount, currency: "USD"), refundedAt: revoked, kind: kind,
                                      reason: reason))
        #expect(charges.first?.amount == Money(minorUnits: 999, currency: "USD"))
    }

    @Test("a revocation Apple does not explain is an error", arguments: [
        ("prorated without a percentage", ["revocationType": "REFUND_PRORATED"] as Changes,
         AppleSnapshotError.Code.missingField),
        ("prorated over 100 %", ["revocationType": "REFUND_PRORATED", "revocationPercentage": 100_001], .invalidMoney),
        ("unknown type", ["revocationType": "REFUND_SOMETIMES"], .unsupportedValue),
        ("prorated share too large to compute", ["revocationType": "REFUND_PRORATED", "revocationPercentage": 25_000,
                                                 "price": Int64.max], .invalidMoney),
    ])
    func unexplainedRevocation(name: String, changes: Changes, code: AppleSnapshotError.Code) {
        let changes = changes.merging(["revocationDate": milliseconds(utc(2025, 5, 25))]) { $1 }
        #expect(failure { try snapshot(status: 5, latest: changes) }.0 == code)
    }

    /// The latest transaction's refund state against the one history holds: the more recently signed wins,
    /// so a refund reversed later (`REFUND_REVERSED`) clears it, and a stale unrevoked copy cannot.
    @Test("the most recently signed copy of a transaction decides its refund", arguments: [
        (utc(2025, 6, 1), utc(2025, 5, 28), false),  // entry signed after the refund: reversed
        (utc(2025, 5, 28), utc(2025, 6, 1), true),  // history's refunded copy is newer
    ])
    func refundReversed(latestSigned: Date, revokedSigned: Date, refunded: Bool) throws {
        let revoked: Changes = ["revocationDate": milliseconds(utc(2025, 5, 27)), "revocationReason": 0,
                                       "signedDate": milliseconds(revokedSigned)]
        let snapshot = try snapshot(latest: ["signedDate": milliseconds(latestSigned)], history: [revoked])
        #expect(snapshot.charges.count == 1)
        #expect((snapshot.charges.first?.refund != nil) == refunded)
    }

    @Test("a family-shared lineage is mirrored as such and never books revenue")
    func familyShared() throws {
        let shared: Changes = ["inAppOwnershipType": "FAMILY_SHARED"]
        let renewal: Changes = ["transactionId": "2000000000000002", "transactionReason": "RENEWAL",
                                       "inAppOwnershipType": "FAMILY_SHARED"]
        let snapshot = try snapshot(latest: shared, history: [shared, renewal])
        #expect(snapshot.ownership == .familyShared)
        #expect(snapshot.state == .active)
        #expect(snapshot.charges.isEmpty)
    }

    @Test("an ownership type the mirror does not know is an error, not a guess", arguments: [
        ["inAppOwnershipType": "BORROWED"] as Changes, ["inAppOwnershipType": nil],
    ])
    func unknownOwnership(changes: Changes) {
        #expect(failure { try snapshot(latest: changes) }.0 == .unsupportedValue)
    }

    @Test("a free trial is in its trial only while it is active and unexpired", arguments: [
        ("running trial", 1, utc(2025, 6, 20), true),
        ("trial past its expiry", 1, utc(2025, 5, 31), false),
        ("expired trial", 2, utc(2025, 6, 20), false),
        ("trial in billing retry", 3, utc(2025, 5, 31), false),
        ("revoked trial", 5, utc(2025, 6, 20), false),
    ])
    func freeTrial(name: String, status: Int, expires: Date, inTrial: Bool) throws {
        let snapshot = try snapshot(status: status, latest: ["price": 0, "offerType": 1, "offerDiscountType": "FREE_TRIAL",
                                                             "expiresDate": milliseconds(expires)])
        #expect(snapshot.inFreeTrial == inTrial)
        #expect(snapshot.charges.isEmpty)
    }

    @Test("a discounted paid period is not a trial")
    func paidOffer() throws {
        let snapshot = try snapshot(latest: ["price": 4990, "offerType": 1, "offerDiscountType": "PAY_AS_YOU_GO"])
        #expect(!snapshot.inFreeTrial)
        #expect(snapshot.charges.map(\.amount) == [Money(minorUnits: 499, currency: "USD")])
    }

    /// A lineage's transactions: a monthly purchase, an immediate upgrade to yearly (the monthly one marked
    /// `isUpgraded`), a yearly renewal. Which history the translator sees decides what it can tell.
    static let first: Changes = ["transactionId": Answers.lineage, "purchaseDate": milliseconds(utc(2025, 5, 1)),
                                        "expiresDate": milliseconds(utc(2025, 6, 1)), "isUpgraded": true]
    static let upgrade: Changes = ["transactionId": "2000000000000010", "productId": Answers.yearly,
                                          "purchaseDate": milliseconds(utc(2025, 5, 10)),
                                          "expiresDate": milliseconds(utc(2026, 5, 10)), "price": 99_990]
    static let renewalOfUpgrade: Changes = ["transactionId": "2000000000000011", "productId": Answers.yearly,
                                                   "transactionReason": "RENEWAL",
                                                   "purchaseDate": milliseconds(utc(2026, 5, 10)),
                                                   "expiresDate": milliseconds(utc(2027, 5, 10)), "price": 99_990]

    @Test("an upgrade purchase is booked as an upgrade and switches the product", arguments: [
        ("upgrade with the upgraded purchase in history", upgrade, [first, upgrade], ["purchase", "upgrade"]),
        ("upgrade without history cannot be told from a purchase", upgrade, [], ["purchase"]),
        ("renewal after the upgrade", renewalOfUpgrade, [first, upgrade, renewalOfUpgrade], ["purchase", "upgrade", "renewal"]),
        ("history out of order", renewalOfUpgrade, [renewalOfUpgrade, upgrade, first], ["purchase", "upgrade", "renewal"]),
        ("a later purchase without an upgraded predecessor", upgrade, [first.merging(["isUpgraded": false]) { $1 }, upgrade],
         ["purchase", "purchase"]),
    ] as [(String, Changes, [Changes], [String])])
    func upgrades(name: String, latest: Changes, history: [Changes], reasons: [String]) throws {
        let snapshot = try snapshot(latest: latest, history: history)
        #expect(snapshot.productID == Answers.yearly)
        #expect(snapshot.periodStart == (latest["purchaseDate"] as? Int64).map { Date(timeIntervalSince1970: Double($0) / 1000) })
        #expect(snapshot.charges.map(\.reason) == reasons)
        #expect(snapshot.charges.last?.amount == Money(minorUnits: 9999, currency: "USD"))
    }

    @Test("history of other lineages is ignored and repeated transactions count once")
    func otherLineagesAndRepeats() throws {
        let other: Changes = ["transactionId": "2000000000000900", "originalTransactionId": "2000000000000900",
                                     "productId": "com.example.storesync.coins", "type": "Consumable", "price": 1990]
        let renewal: Changes = ["transactionId": "2000000000000003", "transactionReason": "RENEWAL",
                                       "purchaseDate": milliseconds(utc(2025, 6, 20))]
        let snapshot = try snapshot(history: [[:], other, renewal, [:], renewal])
        #expect(snapshot.charges.map(\.transactionID) == [Answers.lineage, "2000000000000003"])
        #expect(snapshot.charges.map(\.reason) == ["purchase", "renewal"])
    }

    @Test("a lineage absent from the answer is an error")
    func lineageMissing() throws {
        let answer = try statuses(latest: try transaction(), renewal: nil)
        #expect(throws: AppleSnapshotError.self) {
            try AppleSnapshotTranslator.snapshot(lineage: "2000000000000404", statuses: answer, history: [], source: source,
                                                 fetchedAt: fetchedAt)
        }
        let (code, message) = failure {
            try AppleSnapshotTranslator.snapshot(lineage: "2000000000000404", statuses: answer, history: [], source: source,
                                                 fetchedAt: fetchedAt)
        }
        #expect(code == .lineageNotFound)
        #expect(message.contains("2000000000000404"))
    }

    @Test("fields a snapshot cannot do without", arguments: [
        ("productId", ["productId": nil] as Changes),
        ("purchaseDate of a paid transaction", ["purchaseDate": nil]),
    ])
    func missingFields(name: String, changes: Changes) {
        #expect(failure { try snapshot(latest: changes) }.0 == .missingField)
    }

    @Test("as of the latest signedDate of the entry, else the fetch time", arguments: [
        (utc(2025, 6, 1) as Date?, utc(2025, 6, 1, 0, 0, 5) as Date?, utc(2025, 6, 1, 0, 0, 5)),
        (utc(2025, 6, 1, 0, 0, 9), utc(2025, 6, 1), utc(2025, 6, 1, 0, 0, 9)),
        (utc(2025, 6, 1), nil, utc(2025, 6, 1)),
        (nil, nil, fetchedAt),
    ])
    func asOf(transactionSigned: Date?, renewalSigned: Date?, asOf: Date) throws {
        let snapshot = try snapshot(latest: ["signedDate": transactionSigned.map(milliseconds)],
                                    renewal: ["signedDate": renewalSigned.map(milliseconds)])
        #expect(snapshot.asOf == asOf)
    }

    @Test("the account token comes from the transaction, else the renewal info", arguments: [
        ("t" as String?, "r" as String?, "t" as String?), (nil, "r", "r"), ("", "r", "r"), (nil, nil, nil),
    ])
    func accountToken(transaction: String?, renewal: String?, expected: String?) throws {
        let snapshot = try snapshot(latest: ["appAccountToken": transaction], renewal: ["appAccountToken": renewal])
        #expect(snapshot.accountToken == expected)
    }

    @Test("a Sandbox answer gives a Sandbox snapshot")
    func sandbox() throws {
        let verifier = try Verifiers.sandbox()
        let latest = try verifier.verifiedTransaction(try Answers.signed(Answers.transaction(["environment": "Sandbox"])),
                                                      now: Fixture.now)
        let answer = SubscriptionStatuses(environment: .sandbox, bundleID: Fixture.bundleID, appAppleID: nil, groups: [
            .init(subscriptionGroupIdentifier: nil, lastTransactions: [
                .init(status: 1, originalTransactionID: Answers.lineage, transaction: latest, renewalInfo: nil),
            ]),
        ])
        let snapshot = try AppleSnapshotTranslator.snapshot(lineage: Answers.lineage, statuses: answer, history: [],
                                                            source: source, fetchedAt: fetchedAt)
        #expect(snapshot.environment == .sandbox)
    }

    @Test("raw is compact JSON of the entry with its payloads as Apple signed them")
    func raw() throws {
        let raw = try snapshot(status: 4).raw
        #expect(!raw.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["originalTransactionId", "status", "subscriptionGroupIdentifier", "transactionInfo",
                                     "renewalInfo"])
        #expect(object["originalTransactionId"] as? String == Answers.lineage)
        #expect((object["status"] as? NSNumber)?.intValue == 4)
        #expect(object["subscriptionGroupIdentifier"] as? String == "21000000")
        let info = try #require(object["transactionInfo"] as? [String: Any])
        #expect((info["price"] as? NSNumber)?.int64Value == 9990)
        #expect((info["futureField"] as? [String: Any])?["kept"] as? Bool == true)
        #expect(raw.contains(String(decoding: Answers.transaction(), as: UTF8.self)))
        #expect((object["renewalInfo"] as? [String: Any])?["autoRenewStatus"] as? NSNumber == 1)
    }
}
