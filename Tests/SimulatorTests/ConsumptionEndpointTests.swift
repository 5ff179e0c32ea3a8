import Foundation
import HTTP
import Simulator
import Testing

/// Send Consumption Information v2: validated per Apple's rules, 202 and recorded when valid.
@Suite struct ConsumptionEndpointTests {
    @Test("invalid bodies get Apple's 400 error codes and are not recorded", arguments: [
        (#"{"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, Int64?(4_000_035)),
        (#"{"customerConsented":false,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, 4_000_035),
        (#"{"customerConsented":1,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, 4_000_035),
        (#"{"customerConsented":true,"sampleContentProvided":false}"#, 4_000_036),
        (#"{"customerConsented":true,"deliveryStatus":"LOST","sampleContentProvided":false}"#, 4_000_036),
        (#"{"customerConsented":true,"deliveryStatus":"DELIVERED"}"#, 4_000_041),
        (#"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":"no"}"#, 4_000_041),
        (#"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false,"refundPreference":"MAYBE"}"#, 4_000_044),
        (#"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false,"consumptionPercentage":50000}"#, 4_000_209),
        (#"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","sampleContentProvided":true,"consumptionPercentage":0}"#, 4_000_209),
        ("not json", nil),
        ("[]", nil),
    ])
    func invalidBodies(_ body: String, _ code: Int64?) async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let response = try await harness.send("PUT", "/inApps/v2/transactions/consumption/\(id)", body: Data(body.utf8))
        #expect(response.status == 400)
        #expect(errorCode(response) == code)
        if code == nil { #expect(response.body.isEmpty) }
        #expect(harness.simulator.consumptionRequests.isEmpty)
        await harness.close()
    }

    @Test("valid bodies are accepted with 202 and recorded", arguments: [
        #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#,
        #"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_SERVER_OUTAGE","sampleContentProvided":true,"refundPreference":"GRANT_PRORATED"}"#,
        #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false,"refundPreference":null,"consumptionPercentage":null}"#,
    ])
    func validBodies(_ body: String) async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let renewed = try await harness.simulator.renew(id, silent: true).transactionId
        let response = try await harness.send("PUT", "/inApps/v2/transactions/consumption/\(renewed)", body: Data(body.utf8))
        #expect(response.status == 202)
        #expect(response.body.isEmpty)
        let record = try #require(harness.simulator.consumptionRequests.first)
        #expect(harness.simulator.consumptionRequests.count == 1)
        #expect(record.transactionId == renewed && record.originalTransactionId == id)
        #expect(record.body == body)
        #expect(record.receivedAt == milliseconds(harness.simulator.now))
        #expect(harness.simulator.requestCount(.consumption) == 1)
        await harness.close()
    }

    @Test func familySharedAndUnknownTransactionsAreRefused() async throws {
        let harness = try Harness(notify: false)
        let family = try await harness.subscribe(familyShared: true)
        let body = Data(#"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#.utf8)
        let shared = try await harness.send("PUT", "/inApps/v2/transactions/consumption/\(family)", body: body)
        #expect(shared.status == 400 && errorCode(shared) == 4_000_185)
        let unknown = try await harness.send("PUT", "/inApps/v2/transactions/consumption/2000000999999999", body: body)
        #expect(unknown.status == 404 && errorCode(unknown) == 4_040_010)
        #expect(harness.simulator.consumptionRequests.isEmpty)
        await harness.close()
    }
}
