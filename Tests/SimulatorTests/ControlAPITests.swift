import Accounts
import AppStore
import Crypto
import Foundation
import HTTP
import Simulator
import Testing

/// The HTTP control API drives the same commands as the Swift API, for the CLI and other processes.
@Suite struct ControlAPITests {
    @Test func scenarioCommandsOverHTTPChangeStateAndNotify() async throws {
        let harness = try Harness()
        let subscribed = try await harness.control("POST", "/simulator/scenario/subscribe",
                                                   #"{"productId":"com.example.storesync.monthly","price":9990,"currency":"USD","freeTrial":true}"#)
        #expect(subscribed.status == 200)
        let result = try JSONDecoder().decode(ScenarioResult.self, from: subscribed.body)
        #expect(result.status == .active && result.notification?.notificationType == "SUBSCRIBED")
        #expect(result.notification?.delivery.httpStatus == 200)
        #expect(harness.simulator.transaction(result.originalTransactionId)?.offer == .freeTrial)

        let cancelled = try await harness.control("POST", "/simulator/scenario/cancel",
                                                  #"{"originalTransactionId":"\#(result.originalTransactionId)","silent":true}"#)
        #expect(try JSONDecoder().decode(ScenarioResult.self, from: cancelled.body).notification == nil)
        let expired = try await harness.control("POST", "/simulator/scenario/expire",
                                                #"{"originalTransactionId":"\#(result.originalTransactionId)","expirationReason":"VOLUNTARY"}"#)
        let notification = try harness.verifier.verifyNotification(
            #require(try JSONDecoder().decode(ScenarioResult.self, from: expired.body).notification?.signedPayload))
        #expect(notification.notificationType == "EXPIRED" && notification.subtype == "VOLUNTARY")
        #expect(harness.ingest.received.current.count == 2)

        let state = try jsonObject(try await harness.control("GET", "/simulator/subscriptions/\(result.originalTransactionId)"))
        #expect(state["status"] as? Int == 2)
        #expect((state["transactions"] as? [Any])?.count == 1)
        await harness.close()
    }

    @Test("refused commands answer with the reason", arguments: [
        ("/simulator/scenario/renew", #"{"originalTransactionId":"42"}"#, 404),
        ("/simulator/scenario/renew", "{}", 400),
        ("/simulator/scenario/subscribe", #"{"productId":"p","currency":"USD"}"#, 400),
        ("/simulator/scenario/subscribe", #"{"productId":"p","price":"cheap","currency":"USD"}"#, 400),
        ("/simulator/scenario/teleport", "{}", 404),
        ("/simulator/notifications/resend", #"{"times":1}"#, 409),
        ("/simulator/clock", #"{"advanceMilliseconds":-1}"#, 400),
        ("/simulator/faults", #"{"failedRequests":-2}"#, 400),
    ])
    func refusedCommands(_ path: String, _ body: String, _ status: Int) async throws {
        let harness = try Harness(notify: false)
        let response = try await harness.control("POST", path, body)
        #expect(response.status == status)
        #expect(try jsonObject(response)["error"] is String)
        await harness.close()
    }

    @Test("a family member's purchase cannot be refunded: the control API answers 409 and says what Apple does instead",
          arguments: ["refund", "decline-refund", "consumption-request"])
    func familySharedRefundsAreConflicts(_ action: String) async throws {
        let harness = try Harness()
        let id = try await harness.subscribe(familyShared: true)
        let response = try await harness.control("POST", "/simulator/scenario/\(action)",
                                                 #"{"originalTransactionId":"\#(id)","consumptionRequestReason":"OTHER"}"#)
        #expect(response.status == 409)
        #expect((try jsonObject(response)["error"] as? String)?.contains("revoke-family-sharing") == true)
        #expect(harness.ingest.received.current.isEmpty)
        #expect(harness.simulator.subscription(id)?.status == .active)
        await harness.close()
    }

    @Test func theClockMovesOnlyWithinItsWindow() async throws {
        let harness = try Harness(notify: false)
        let century = Int64(100 * 365) * 86_400_000
        for body in [#"{"advanceMilliseconds":9223372036854775807}"#, "{\"advanceMilliseconds\":\(century + 1)}",
                     #"{"to":9223372036854775807}"#, #"{"to":-9223372036854775808}"#,
                     "{\"to\":\(milliseconds(utc(2200)) + 1)}", "{\"to\":\(milliseconds(utc(1999, 12, 31)))}",
                     "{\"advanceMilliseconds\":1,\"to\":\(Int64.max)}"] {
            let response = try await harness.control("POST", "/simulator/clock", body)
            #expect(response.status == 400, "\(body)")
            #expect(try jsonObject(response)["error"] is String, "\(body)")
        }
        #expect(harness.simulator.now == Fixture.start)

        let stepped = try jsonObject(try await harness.control("POST", "/simulator/clock", "{\"advanceMilliseconds\":\(century)}"))
        #expect((stepped["now"] as? NSNumber)?.int64Value == milliseconds(Fixture.start) + century)
        let end = milliseconds(utc(2200))
        #expect(try await harness.control("POST", "/simulator/clock", "{\"to\":\(end)}").status == 200)
        #expect(try await harness.control("POST", "/simulator/clock", #"{"to":946684800000}"#).status == 200)
        #expect(harness.simulator.now == utc(2200))
        #expect(try await harness.control("POST", "/simulator/clock", #"{"advanceMilliseconds":1}"#).status == 400)
        #expect(harness.simulator.now == utc(2200))
        await harness.close()
    }

    @Test func clockFaultsCountersAndConsumptionAreReachable() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let clock = try jsonObject(try await harness.control("POST", "/simulator/clock", #"{"advanceMilliseconds":90000}"#))
        #expect((clock["now"] as? NSNumber)?.int64Value == milliseconds(Fixture.start) + 90_000)
        #expect(harness.simulator.now == Fixture.start.addingTimeInterval(90))

        let faults = try await harness.control("POST", "/simulator/faults", #"{"failedRequests":1,"latencyMilliseconds":1}"#)
        #expect(try JSONDecoder().decode(FaultSettings.self, from: faults.body).failedRequests == 1)
        #expect(try await harness.send("GET", "/inApps/v2/history/\(id)").status == 500)

        let body = Data(#"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":true}"#.utf8)
        #expect(try await harness.send("PUT", "/inApps/v2/transactions/consumption/\(id)", body: body).status == 202)
        let recorded = try JSONDecoder().decode([ConsumptionRecord].self,
                                                from: try await harness.control("GET", "/simulator/consumption").body)
        #expect(recorded.map(\.transactionId) == [id])

        let counts = try jsonObject(try await harness.control("GET", "/simulator/requests"))
        #expect(counts[SimulatorEndpoint.transactionHistory.rawValue] as? Int == 1)
        #expect(counts[SimulatorEndpoint.consumption.rawValue] as? Int == 1)

        let root = try await harness.control("GET", "/simulator/root.pem")
        #expect(String(decoding: root.body, as: UTF8.self) == harness.simulator.rootCertificate.pem)
        await harness.close()
    }

    @Test func theRootCertificateCanBeWrittenForAStoreConnection() async throws {
        let harness = try Harness(notify: false)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("simulator-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pem = directory.appendingPathComponent("root.pem").path
        let der = directory.appendingPathComponent("root.cer").path
        try harness.simulator.writeRootCertificate(to: pem)
        try harness.simulator.writeRootCertificate(to: der, format: .der)

        for path in [pem, der] {
            let roots = try Certificate.load(try #require(FileManager.default.contents(atPath: path)))
            #expect(roots.map(\.der) == [harness.simulator.rootCertificate.der])
        }
        await harness.close()
    }
}
