import AppStore
import Crypto
import Foundation
import HTTP
import Simulator
import Testing

/// Get Transaction History v2: 20 per page, ascending by modification, revisions that bring changed
/// transactions back, filters, and Apple's errors for bad parameters.
@Suite struct TransactionHistoryTests {
    struct Page {
        let ids: [String]
        let revision: String
        let hasMore: Bool
    }

    func page(_ harness: Harness, _ id: String, _ query: String = "") async throws -> Page {
        let response = try await harness.send("GET", "/inApps/v2/history/\(id)\(query)")
        try #require(response.status == 200)
        let body = try jsonObject(response)
        #expect(body["bundleId"] as? String == Fixture.bundleID && body["environment"] as? String == "Production")
        let signed = try #require(body["signedTransactions"] as? [String])
        return Page(ids: try signed.map { try harness.verifier.verifyTransaction($0).transactionId ?? "" },
                    revision: try #require(body["revision"] as? String), hasMore: try #require(body["hasMore"] as? Bool))
    }

    @Test func pagesTwentyAtATimeAndARevisionBringsBackChangedTransactions() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        var all = [id]
        for _ in 0..<24 { all.append(try await harness.simulator.renew(id, silent: true).transactionId) }

        let first = try await page(harness, id)
        #expect(first.ids == Array(all.prefix(20)) && first.hasMore)
        let second = try await page(harness, id, "?revision=\(first.revision)")
        #expect(second.ids == Array(all.suffix(5)) && !second.hasMore)
        let caughtUp = try await page(harness, id, "?revision=\(second.revision)")
        #expect(caughtUp.ids.isEmpty && !caughtUp.hasMore && caughtUp.revision == second.revision)

        // A transaction refunded after it was handed out comes again, updated, after the last revision.
        try await harness.simulator.refund(id, transactionId: all[3], silent: true)
        let renewed = try await harness.simulator.renew(id, silent: true)
        let changes = try await page(harness, id, "?revision=\(second.revision)")
        #expect(changes.ids == [all[3], renewed.transactionId])
        await harness.close()
    }

    @Test func descendingPagesFromTheMostRecentlyModified() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        var all = [id]
        for _ in 0..<21 { all.append(try await harness.simulator.renew(id, silent: true).transactionId) }
        let first = try await page(harness, id, "?sort=DESCENDING")
        #expect(first.ids == Array(all.reversed().prefix(20)) && first.hasMore)
        let second = try await page(harness, id, "?sort=DESCENDING&revision=\(first.revision)")
        #expect(second.ids == [all[1], all[0]] && !second.hasMore)
        await harness.close()
    }

    @Test func filtersSelectTransactions() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let renewed = try await harness.simulator.renew(id, silent: true).transactionId
        try harness.simulator.advanceClock(by: .seconds(86_400))
        let upgraded = try await harness.simulator.upgrade(id, to: Fixture.yearly, price: 99_990, silent: true).transactionId
        let renewedStart = try #require(harness.simulator.transaction(renewed)).purchaseDate

        #expect(try await page(harness, id, "?productId=\(Fixture.yearly)").ids == [upgraded])
        #expect(try await page(harness, id, "?revoked=true").ids == [renewed])
        #expect(try await page(harness, id, "?revoked=false").ids == [id, upgraded])
        #expect(try await page(harness, id, "?productType=CONSUMABLE").ids.isEmpty)
        #expect(try await page(harness, id, "?productType=AUTO_RENEWABLE&inAppOwnershipType=PURCHASED").ids.count == 3)
        #expect(try await page(harness, id, "?startDate=\(milliseconds(renewedStart))&endDate=\(milliseconds(renewedStart) + 1)").ids == [renewed])
        await harness.close()
    }

    @Test("bad parameters get Apple's error codes", arguments: [
        ("?sort=UP", Int64(4_000_021)), ("?sort=ASCENDING&sort=DESCENDING", 4_000_021), ("?revision=bm9wZQ", 4_000_005),
        ("?revision=%%%", 4_000_000), ("?productType=GAME", 4_000_022), ("?revoked=yes", 4_000_030),
        ("?startDate=x", 4_000_015), ("?endDate=-5", 4_000_016), ("?startDate=10&endDate=10", 4_000_013),
        ("?inAppOwnershipType=STOLEN", 4_000_026), ("?productId=", 4_000_023),
    ])
    func badParameters(_ query: String, _ code: Int64) async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let response = try await harness.send("GET", "/inApps/v2/history/\(id)\(query)")
        #expect(response.status == 400)
        #expect(errorCode(response) == code)
        await harness.close()
    }

    /// A revision whose position lies past every change the store made is not one it handed out (a token kept
    /// from another store, or forged): Apple's 400 `4000005`, in Apple's error body.
    @Test func aRevisionPastEveryChangeIsRefusedAsInvalidRequestRevision() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let issued = try await page(harness, id).revision
        let fields = String(decoding: try Base64URL.decode(issued), as: UTF8.self).split(separator: ":")
        try #require(fields.count == 3)
        let ahead = Base64URL.encode(Data("\(fields[0]):\(Int64(fields[1])! + 1):\(fields[2])".utf8))
        let unknown = try await harness.send("GET", "/inApps/v2/history/\(id)?revision=\(ahead)")
        #expect(unknown.status == 400)
        let body = try jsonObject(unknown)
        #expect(body["errorCode"] as? Int == 4_000_005 && body["errorMessage"] as? String == "Invalid request revision.")
        #expect(body.count == 2)
        // Once the store has changed that far, the same position is a revision it could have handed out.
        _ = try await harness.simulator.renew(id, silent: true)
        #expect(try await page(harness, id, "?revision=\(ahead)").hasMore == false)
        await harness.close()
    }

    @Test func aRevisionOnlyWorksWithTheQueryItWasIssuedFor() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let first = try await page(harness, id, "?productId=\(Fixture.monthly)")
        let mismatched = try await harness.send("GET", "/inApps/v2/history/\(id)?revision=\(first.revision)")
        #expect(mismatched.status == 400 && errorCode(mismatched) == 4_000_005)
        let descending = try await harness.send("GET", "/inApps/v2/history/\(id)?productId=\(Fixture.monthly)&sort=DESCENDING&revision=\(first.revision)")
        #expect(descending.status == 400 && errorCode(descending) == 4_000_005)
        await harness.close()
    }
}
