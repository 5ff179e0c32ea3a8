import AppStore
import Foundation
import HTTP
import Simulator
import Testing

/// Get Notification History: what was signed, how sending it went, paged and filtered as Apple does.
@Suite struct NotificationHistoryTests {
    struct Page {
        let types: [String]
        let attempts: [[String]]
        let token: String?
    }

    func page(_ harness: Harness, _ body: [String: Any], token: String? = nil) async throws -> Page {
        let query = token.map { "?paginationToken=\($0)" } ?? ""
        let response = try await harness.send("POST", "/inApps/v1/notifications/history\(query)",
                                              body: try JSONSerialization.data(withJSONObject: body))
        try #require(response.status == 200)
        let object = try jsonObject(response)
        let history = try #require(object["notificationHistory"] as? [[String: Any]])
        let types = try history.map { try harness.verifier.verifyNotification(#require($0["signedPayload"] as? String)).notificationType }
        let attempts = history.map { ($0["sendAttempts"] as? [[String: Any]] ?? []).compactMap { $0["sendAttemptResult"] as? String } }
        #expect((object["hasMore"] as? Bool) == (object["paginationToken"] != nil))
        return Page(types: types, attempts: attempts, token: object["paginationToken"] as? String)
    }

    /// Apple keeps 180 days of production history: daily periods keep a long scenario inside it.
    func dailyHarness() throws -> Harness {
        var app = try Fixture.app()
        app.renewalPeriod = .seconds(86_400)
        return try Harness(apps: [app], notify: false)
    }

    var window: [String: Any] {
        ["startDate": milliseconds(Fixture.start) - 1000, "endDate": milliseconds(Fixture.start) + 400 * 86_400_000]
    }

    @Test func recordsAttemptsAndFindsFailures() async throws {
        let harness = try Harness()
        let id = try await harness.subscribe(silent: false)
        try harness.simulator.dropNextNotifications(1)
        try await harness.simulator.renew(id)
        harness.ingest.status.withLock { $0 = 500 }
        try await harness.simulator.cancel(id)
        harness.ingest.status.withLock { $0 = 200 }
        try await harness.simulator.resendLastNotification()

        let all = try await page(harness, window)
        #expect(all.types == ["SUBSCRIBED", "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS"])
        #expect(all.attempts == [["SUCCESS"], ["NO_RESPONSE"], ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"]])
        var onlyFailures = window
        onlyFailures["onlyFailures"] = true
        #expect(try await page(harness, onlyFailures).types == ["DID_RENEW"])
        await harness.close()
    }

    @Test func pagesTwentyAtATimeAndFilters() async throws {
        let harness = try dailyHarness()
        let id = try await harness.subscribe(silent: false)
        for _ in 0..<21 { try await harness.simulator.renew(id) }
        let other = try await harness.subscribe(silent: false)

        let first = try await page(harness, window)
        #expect(first.types.count == 20)
        let token: String = try #require(first.token)
        let second = try await page(harness, window, token: token)
        #expect(second.types == ["DID_RENEW", "DID_RENEW", "SUBSCRIBED"] && second.token == nil)

        var byType = window
        byType["notificationType"] = "SUBSCRIBED"
        byType["notificationSubtype"] = "INITIAL_BUY"
        #expect(try await page(harness, byType).types == ["SUBSCRIBED", "SUBSCRIBED"])
        var byTransaction = window
        byTransaction["transactionId"] = other
        #expect(try await page(harness, byTransaction).types == ["SUBSCRIBED"])
        // The window ends before its endDate: the first renewal is signed exactly one day in.
        var firstDay = window
        firstDay["endDate"] = milliseconds(Fixture.start) + 86_400_000
        #expect(try await page(harness, firstDay).types == ["SUBSCRIBED"])
        firstDay["endDate"] = milliseconds(Fixture.start) + 86_400_001
        #expect(try await page(harness, firstDay).types == ["SUBSCRIBED", "DID_RENEW"])
        await harness.close()
    }

    @Test("bad requests get Apple's error codes", arguments: [
        (#"{"endDate":2}"#, Int64?(4_000_015)),
        (#"{"startDate":1767225600000}"#, 4_000_016),
        (#"{"startDate":1767225600000,"endDate":1767225600000}"#, 4_000_013),
        (#"{"startDate":1000,"endDate":1767225600000}"#, 4_000_012),
        (#"{"startDate":1767225600000,"endDate":1767229200000,"notificationType":"NOPE"}"#, 4_000_018),
        (#"{"startDate":1767225600000,"endDate":1767229200000,"notificationType":"REFUND","transactionId":"1"}"#, 4_000_019),
        (#"{"startDate":1767225600000,"endDate":1767229200000,"transactionId":"x"}"#, 4_000_006),
        ("nope", nil),
    ])
    func badRequests(_ body: String, _ code: Int64?) async throws {
        let harness = try Harness(notify: false)
        let response = try await harness.send("POST", "/inApps/v1/notifications/history", body: Data(body.utf8))
        #expect(response.status == 400)
        #expect(errorCode(response) == code)
        await harness.close()
    }

    @Test func aPaginationTokenFromAnotherQueryIsRefused() async throws {
        let harness = try dailyHarness()
        let id = try await harness.subscribe(silent: false)
        for _ in 0..<20 { try await harness.simulator.renew(id) }
        let token = try #require(try await page(harness, window).token)
        var narrower = window
        narrower["notificationType"] = "DID_RENEW"
        let response = try await harness.send("POST", "/inApps/v1/notifications/history?paginationToken=\(token)",
                                              body: try JSONSerialization.data(withJSONObject: narrower))
        #expect(response.status == 400 && errorCode(response) == 4_000_014)
        await harness.close()
    }
}
