import AppStore
import Crypto
import Foundation
import HTTP
import Logging
import Simulator
@testable import Sync
import TestSupport
import Testing

/// A stored history revision Apple refuses (`4000005` InvalidRequestRevision) must not dead-letter the
/// lineage's every notification and resync: the history is read again from the start in the same job, and
/// the fresh revision replaces the refused one.
@Suite struct AppleRevisionResetTests {
    /// How the stored revision went bad.
    enum BadRevision: String, CaseIterable, Sendable {
        /// Not a revision at all.
        case unparseable
        /// Well-formed, but pointing past every change the store has made: not one it handed out.
        case unknown
    }

    /// `revision` with its position moved past anything the simulator issued (its revisions read
    /// `r1:<position>:<query fingerprint>`, base64url-encoded).
    private static func pastEveryChange(_ revision: String) throws -> String {
        let fields = String(decoding: try Base64URL.decode(revision), as: UTF8.self).split(separator: ":")
        try #require(fields.count == 3)
        return Base64URL.encode(Data("\(fields[0]):999999999:\(fields[2])".utf8))
    }

    private static func storedRevision(_ pipeline: Pipeline, _ lineage: String) async throws -> String? {
        try await pipeline.database.pool.query("SELECT history_revision FROM store_purchases WHERE lineage = $1",
                                               [lineage])[0].decodeOptional(0)
    }

    @Test(arguments: BadRevision.allCases)
    func aRefusedRevisionIsReplacedByReadingTheHistoryFromTheStart(_ bad: BadRevision) async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            let good = try #require(try await Self.storedRevision(pipeline, lineage))
            let refused = switch bad {
            case .unparseable: "not-a-revision"
            case .unknown: try Self.pastEveryChange(good)
            }
            try await pipeline.database.pool.query("UPDATE store_purchases SET history_revision = $2 WHERE lineage = $1",
                                                   [lineage, refused])

            pipeline.simulator.resetRequestCounts()
            try await pipeline.simulator.renew(lineage)
            try await pipeline.settle()
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(pipeline.retriedJobs() == 0)
            #expect(pipeline.simulator.requestCount(.transactionHistory) == 2, "the refused read, then one from the start")
            let transactions = try #require(pipeline.simulator.subscription(lineage)).transactionIds
            #expect(try await pipeline.invoices(lineage).map(\.transactionID) == transactions, "one invoice each")
            let replaced = try #require(try await Self.storedRevision(pipeline, lineage))
            #expect(replaced != refused)

            // The replacement is a revision Apple accepts: the next notification reads incrementally again.
            pipeline.simulator.resetRequestCounts()
            try await pipeline.simulator.renew(lineage)
            try await pipeline.settle()
            #expect(pipeline.simulator.requestCount(.transactionHistory) == 1)
            #expect(try await pipeline.invoices(lineage).count == 3)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
        }
    }

    /// What a stand-in App Store answers a history request without a revision (one with a revision is always
    /// refused), and how the re-fetch must then fail.
    struct Retry: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let body: String
        let code: AppStoreAPIError.Code
        let retryable: Bool
        var testDescription: String { name }
    }

    @Test("when the read from the start fails too, its own failure stands", arguments: [
        Retry(name: "a server error: retried later", status: 500,
              body: #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#, code: .serverError,
              retryable: true),
        Retry(name: "4000005 again: not read a third time", status: 400,
              body: #"{"errorCode":4000005,"errorMessage":"Invalid request revision."}"#, code: .invalidRevision,
              retryable: false),
    ])
    func theReadFromTheStartIsTriedOnce(_ retry: Retry) async throws {
        let (server, recorder) = try Self.standIn(withoutRevision: .json(retry.status, retry.body))
        let http = try HTTPClient()
        let refetch = try Self.refetch(port: server.port, http: http)
        let error = await #expect(throws: AppStoreAPIError.self) {
            try await refetch.history(connectionID: 1, lineage: "2000000000000001", transactionID: "2000000000000001",
                                      revision: "stale")
        }
        #expect(error?.code == retry.code && error?.isRetryable == retry.retryable, "\(String(describing: error))")
        #expect(recorder.requests.map(\.query) == ["revision=stale&sort=ASCENDING", "sort=ASCENDING"])
        await http.shutdown()
        await server.stop(grace: .seconds(1))
    }

    @Test func aRefusalOfARequestWithoutARevisionIsNotRepeated() async throws {
        let refused = HTTPResponse.json(400, #"{"errorCode":4000005,"errorMessage":"Invalid request revision."}"#)
        let (server, recorder) = try Self.standIn(withoutRevision: refused)
        let http = try HTTPClient()
        let refetch = try Self.refetch(port: server.port, http: http)
        for revision in [nil, ""] {
            let error = await #expect(throws: AppStoreAPIError.self) {
                try await refetch.history(connectionID: 1, lineage: "2000000000000001", transactionID: "2000000000000001",
                                          revision: revision)
            }
            #expect(error?.code == .invalidRevision)
        }
        #expect(recorder.requests.map(\.query) == ["sort=ASCENDING", "sort=ASCENDING"])
        await http.shutdown()
        await server.stop(grace: .seconds(1))
    }

    /// A history endpoint on loopback that refuses every revision (`4000005`, as Apple does for one it does
    /// not know) and answers `withoutRevision` otherwise, recording what it was asked.
    private static func standIn(withoutRevision: HTTPResponse) throws -> (HTTPServer, Recorder) {
        let recorder = Recorder()
        let refused = HTTPResponse.json(400, #"{"errorCode":4000005,"errorMessage":"Invalid request revision."}"#)
        var router = HTTPRouter()
        router.route("GET", prefix: "/inApps/v2/history/") { request in
            recorder.record(request)
            return (request.query ?? "").contains("revision=") ? refused : withoutRevision
        }
        return (try HTTPServer(configuration: HTTPServerConfiguration(), router: router), recorder)
    }

    private static func refetch(port: UInt16, http: HTTPClient) throws -> AppleRefetch {
        let configuration = AppStoreAPIConfiguration(environment: .production, bundleID: Pipeline.bundleID, keyID: "KEY123",
                                                     issuerID: "issuer-1", privateKey: try PrivateKey.generate(.ecP256),
                                                     baseURL: "http://127.0.0.1:\(port)")
        let verifier = try SignedDataVerifier(bundleID: Pipeline.bundleID, appAppleID: Pipeline.appAppleID,
                                              environment: .production)
        let client = try AppStoreAPIClient(configuration: configuration, verifier: verifier, httpClient: http)
        return AppleRefetch(client: client, logger: Logger(component: "test"))
    }
}
