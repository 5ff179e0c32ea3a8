import Foundation
import Queue
import Testing

/// Typed job args: which kind names are valid, the one payload style they are written in, the previous
/// release's camelCase keys still read, and the reasons an unreadable payload dead-letters with.
@Suite struct JobArgsTests {
    struct Sample: JobArgs {
        static let kind: JobKind = "test.sample"

        struct Order: Codable, Sendable, Equatable {
            let orderID: String

            enum CodingKeys: String, CodingKey {
                case orderID = "order_id"
            }
        }

        let connectionID: Int64
        let notificationUUID: String?
        let at: Date?
        let orders: [Order]?

        enum CodingKeys: String, CodingKey {
            case connectionID = "connection_id", notificationUUID = "notification_uuid", at, orders
        }
    }

    @Test(arguments: [
        ("apple.resync", true), ("a", true), ("0-9_x.y", true), (String(repeating: "a", count: 100), true),
        ("", false), ("Bad Kind", false), ("apple.Resync", false), (".apple", false), ("_apple", false),
        ("-apple", false), ("apple/resync", false), ("é", false), (String(repeating: "a", count: 101), false),
    ])
    func kindNamesFollowTheJobsTablesRule(name: String, valid: Bool) {
        #expect(JobKind.isValid(name) == valid)
        #expect(JobKind(name)?.name == (valid ? name : nil))
    }

    @Test func argsAreWrittenInSnakeCaseWithISO8601Times() throws {
        let at = Date(timeIntervalSince1970: 1_795_960_800.125)
        let job = try NewJob(Sample(connectionID: 7, notificationUUID: "u-1", at: at, orders: [.init(orderID: "GPA.1")]),
                             priority: 3, uniqueKey: "k")
        #expect(job.kind == "test.sample")
        #expect(job.payload
                == #"{"at":"2026-11-29T14:00:00.125Z","connection_id":7,"notification_uuid":"u-1","orders":[{"order_id":"GPA.1"}]}"#)
        #expect(job.priority == 3 && job.uniqueKey == "k")
        let read = try JobPayload.decode(Sample.self, from: job.payload)
        #expect(read.connectionID == 7 && read.notificationUUID == "u-1" && read.at == at && read.orders == [.init(orderID: "GPA.1")])
    }

    /// Both key styles for one release: the previous release wrote `connectionID`, `notificationUUID`, `orderID`.
    @Test(arguments: [
        #"{"connection_id":7,"notification_uuid":"u-1","orders":[{"order_id":"GPA.1"}]}"#,
        #"{"connectionID":7,"notificationUUID":"u-1","orders":[{"orderID":"GPA.1"}]}"#,
    ])
    func snakeCaseAndThePreviousReleasesCamelCaseBothRead(payload: String) throws {
        let read = try JobPayload.decode(Sample.self, from: payload)
        #expect(read.connectionID == 7 && read.notificationUUID == "u-1" && read.orders == [.init(orderID: "GPA.1")])
    }

    /// What PostgreSQL's `jsonb` writes for a `timestamptz`: microseconds, an offset, no fraction when it is zero.
    @Test(arguments: [
        ("2026-11-29T14:00:00.125+00:00", 1_795_960_800.125), ("2026-11-29T14:00:00+00:00", 1_795_960_800),
        ("2026-11-29T16:00:00.5+02:00", 1_795_960_800.5), ("2026-11-29T14:00:00.125Z", 1_795_960_800.125),
    ])
    func timesAreReadAsPostgreSQLAndTheEncoderWriteThem(text: String, seconds: Double) throws {
        let read = try JobPayload.decode(Sample.self, from: #"{"connection_id":1,"at":"\#(text)"}"#)
        #expect(abs((read.at?.timeIntervalSince1970 ?? 0) - seconds) < 0.000_001)
    }

    /// A payload that cannot be read can never be: permanent, naming the kind and the field, quoting no value.
    @Test(arguments: [
        (#"{"notification_uuid":"u"}"#, "the test.sample job's payload has no connection_id"),
        (#"{"connection_id":"tok-SECRET"}"#, "the test.sample job's payload has the wrong type at connection_id: it must be Int64"),
        (#"{"connection_id":null}"#, "the test.sample job's payload has null for connection_id, which must be Int64"),
        (#"{"connection_id":1,"orders":[{"order_id":"a"},{}]}"#, "the test.sample job's payload has no orders[1].order_id"),
        (#"{"connection_id":1,"at":"tok-SECRET"}"#, "the test.sample job's payload has a malformed at"),
        (#""first""#, "the test.sample job's payload is not a JSON object"),
        ("{tok-SECRET", "the test.sample job's payload is not JSON"),
    ])
    func unreadablePayloadsFailPermanentlyWithAReasonThatQuotesNoValue(payload: String, reason: String) {
        #expect { try JobPayload.decode(Sample.self, from: payload) } throws: { error in
            let failure = error as? JobFailure
            return failure?.code == .permanent && failure?.message == reason
        }
    }

    @Test func aJobOfAnotherKindIsNotReadAsTheseArgs() {
        let job = LeasedJob(id: 1, kind: "test.other", payload: #"{"connection_id":1}"#, raw: nil, headers: nil, priority: 0,
                            attempt: 1, maxAttempts: 25, createdAt: Date(), uniqueKey: nil)
        #expect { try job.args(Sample.self) } throws: { error in
            (error as? JobFailure)?.message == "a test.other job cannot be read as a test.sample job"
        }
        #expect(throws: Never.self) { try LeasedJob(id: 1, kind: "test.sample", payload: job.payload, raw: nil, headers: nil,
                                                      priority: 0, attempt: 1, maxAttempts: 25, createdAt: Date(),
                                                      uniqueKey: nil).args(Sample.self) }
    }
}
