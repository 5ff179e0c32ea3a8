import AppStore
import Crypto
import Foundation
import HTTP
import TestPKI
import TestSupport
import Testing

private let statusesPath = "/inApps/v1/subscriptions/\(Answers.lineage)"
private let historyPath = "/inApps/v2/history/\(Answers.lineage)"
private let consumptionPath = "/inApps/v2/transactions/consumption/\(Answers.lineage)"

/// A status answer with one verified entry per call, signed once.
private func statusAnswer() throws -> String {
    let transaction = try Answers.signed(Answers.transaction())
    let renewal = try Answers.signed(Answers.renewal())
    return Answers.statusResponse([("21000000", [Answers.entry(transaction: transaction, renewal: renewal)])])
}

private let consumption = ConsumptionRequest(customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false,
                                             consumptionPercentage: 25_000, refundPreference: .decline,
                                             productType: .consumable)

/// The error `body` throws, which must be an `AppStoreAPIError`.
private func apiError(_ body: () async throws -> Void) async throws -> AppStoreAPIError {
    do {
        try await body()
    } catch let error as AppStoreAPIError {
        return error
    }
    throw ExpectedFailure()
}

private struct ExpectedFailure: Error, CustomStringConvertible {
    var description: String { "expected an AppStoreAPIError, the call succeeded" }
}

/// Guards `AppStoreAPIClient` against a real HTTP server on loopback that answers as Apple documents, with
/// payloads signed by a local Apple-shaped PKI: the requests it sends (paths, headers, bearer JWT), the
/// verification of every nested JWS, history paging, the classification of every failure, and pacing.
@Suite("App Store API client")
struct AppStoreAPIClientTests {
    @Test("statuses: every nested JWS is verified and returned typed, one entry per entitlement")
    func statuses() async throws {
        let family = "2000000000000099"
        let purchased = try Answers.signed(Answers.transaction())
        let renewal = try Answers.signed(Answers.renewal(["gracePeriodExpiresDate": milliseconds(utc(2025, 6, 26))]))
        let shared = try Answers.signed(Answers.transaction(["transactionId": family, "originalTransactionId": family,
                                                             "inAppOwnershipType": "FAMILY_SHARED", "productId": Answers.yearly]))
        let body = Answers.statusResponse([
            ("21000000", [Answers.entry(status: 4, transaction: purchased, renewal: renewal),
                          Answers.entry(status: 1, original: family, transaction: shared, renewal: nil)]),
            ("21000001", []),
        ])
        let apple = try AppleServer([("GET", statusesPath, { _ in .json(200, body) })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)

        let statuses = try await client.subscriptionStatuses(transactionID: Answers.lineage)
        #expect(statuses.environment == .production)
        #expect(statuses.bundleID == Fixture.bundleID)
        #expect(statuses.appAppleID == Fixture.appAppleID)
        #expect(statuses.groups.map(\.subscriptionGroupIdentifier) == ["21000000", "21000001"])
        let entries = try #require(statuses.groups.first).lastTransactions
        #expect(entries.map(\.status) == [4, 1])
        #expect(entries.map(\.originalTransactionID) == [Answers.lineage, family])
        #expect(entries[0].transaction.payload.price == 9990)
        #expect(entries[0].renewalInfo?.payload.gracePeriodExpiresDate == utc(2025, 6, 26))
        #expect(entries[1].transaction.payload.inAppOwnershipType == "FAMILY_SHARED")
        #expect(entries[1].renewalInfo == nil)
        // The signed JSON is kept byte for byte, unmodeled fields included.
        #expect(entries[0].transaction.json == Answers.transaction())
        #expect(statuses.entry(lineage: family)?.entry.transaction.payload.productId == Answers.yearly)
        #expect(statuses.entry(lineage: "1") == nil)

        let request = try #require(apple.recorder.requests.first)
        #expect(request.method == "GET")
        #expect(request.path == statusesPath)
        #expect(request.query == nil)
        #expect(request.header("accept") == "application/json")
        await http.shutdown()
        await apple.stop()
    }

    @Test("the bearer token is an ES256 JWT signed with the connection's key, with Apple's claims")
    func bearerToken() async throws {
        let body = try statusAnswer()
        let apple = try AppleServer([("GET", statusesPath, { _ in .json(200, body) })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)
        _ = try await client.subscriptionStatuses(transactionID: Answers.lineage)

        let header = try #require(apple.recorder.requests.first?.header("authorization"))
        #expect(header.hasPrefix("Bearer "))
        let jws = try CompactJWS(String(header.dropFirst("Bearer ".count)))
        try jws.verify(.es256, with: try APIKey.key.get().publicKey)
        #expect(jws.header.kid == APIKey.keyID)
        #expect(jws.header.typ == "JWT")
        let claims = try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
        #expect(claims["iss"] as? String == APIKey.issuerID)
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == Fixture.bundleID)
        let iat = try #require((claims["iat"] as? NSNumber)?.int64Value)
        #expect(iat == Int64(Fixture.now.timeIntervalSince1970))
        #expect((claims["exp"] as? NSNumber)?.int64Value == iat + 1200)
        await http.shutdown()
        await apple.stop()
    }

    @Test("one token serves every endpoint and concurrent caller until 60 s before it expires")
    func tokenReuse() async throws {
        let status = try statusAnswer()
        let page = Answers.historyPage([], revision: "r1", hasMore: false)
        let apple = try AppleServer([
            ("GET", statusesPath, { _ in .json(200, status) }),
            ("GET", historyPath, { _ in .json(200, page) }),
            ("PUT", consumptionPath, { _ in HTTPResponse(status: 202) }),
        ])
        let http = try HTTPClient()
        let clock = ManualNow(Fixture.now)
        let client = try APIKey.client(base: apple.base, http: http, now: { clock.now })

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { _ = try await client.subscriptionStatuses(transactionID: Answers.lineage) } }
            try await group.waitForAll()
        }
        _ = try await client.transactionHistory(transactionID: Answers.lineage)
        try await client.sendConsumption(transactionID: Answers.lineage, request: consumption)
        clock.advance(by: .seconds(1140 - 1))  // 1 s before the renewal point (exp − 60 s)
        _ = try await client.subscriptionStatuses(transactionID: Answers.lineage)
        #expect(Set(apple.recorder.bearerTokens).count == 1)
        #expect(apple.recorder.bearerTokens.count == 13)

        clock.advance(by: .seconds(1))
        _ = try await client.subscriptionStatuses(transactionID: Answers.lineage)
        _ = try await client.subscriptionStatuses(transactionID: Answers.lineage)
        let tokens = apple.recorder.bearerTokens
        #expect(Set(tokens).count == 2)
        #expect(tokens[13] != tokens[12])
        #expect(tokens[14] == tokens[13])
        let renewed = try JSONSerialization.jsonObject(with: CompactJWS(tokens[13]).payload) as? [String: Any]
        #expect((renewed?["iat"] as? NSNumber)?.int64Value == Int64(Fixture.now.timeIntervalSince1970) + 1140)
        await http.shutdown()
        await apple.stop()
    }

    @Test("after a 401 the next request signs a fresh token instead of reusing the refused one")
    func unauthorizedDiscardsToken() async throws {
        let status = try statusAnswer()
        let calls = Counter()
        let apple = try AppleServer([("GET", statusesPath, { _ in
            calls.increment() == 1 ? .json(401, "") : .json(200, status)
        })])
        let http = try HTTPClient()
        let clock = ManualNow(Fixture.now)
        let client = try APIKey.client(base: apple.base, http: http, now: { clock.now })

        let error = try await apiError { _ = try await client.subscriptionStatuses(transactionID: Answers.lineage) }
        #expect(error.code == .unauthorized)
        clock.advance(by: .seconds(5))
        _ = try await client.subscriptionStatuses(transactionID: Answers.lineage)
        _ = try await client.subscriptionStatuses(transactionID: Answers.lineage)
        let tokens = apple.recorder.bearerTokens
        #expect(tokens.count == 3)
        #expect(tokens[1] != tokens[0])
        #expect(tokens[2] == tokens[1])
        await http.shutdown()
        await apple.stop()
    }

    @Test("history follows hasMore with the revision, verifies every transaction and returns the last revision")
    func historyPaging() async throws {
        let ids = (1...5).map { "20000000000001\($0)0" }
        let signed = try ids.map { try Answers.signed(Answers.transaction(["transactionId": $0])) }
        let pages: [String: String] = [
            "sort=ASCENDING": Answers.historyPage(Array(signed[0..<2]), revision: "r+1/=", hasMore: true),
            "revision=r%2B1%2F%3D&sort=ASCENDING": Answers.historyPage(Array(signed[2..<4]), revision: "r2", hasMore: true),
            "revision=r2&sort=ASCENDING": Answers.historyPage(Array(signed[4...]), revision: "r3", hasMore: false),
            "revision=r3&sort=ASCENDING": Answers.historyPage([], revision: "r3", hasMore: false),
        ]
        let apple = try AppleServer([("GET", historyPath, { request in
            pages[request.query ?? ""].map { .json(200, $0) } ?? .json(400, #"{"errorCode":4000005,"errorMessage":"bad revision"}"#)
        })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)

        let history = try await client.transactionHistory(transactionID: Answers.lineage)
        #expect(history.transactions.map(\.payload.transactionId) == ids)
        #expect(history.revision == "r3")
        #expect(history.hasMore == false)
        #expect(apple.recorder.requests.map(\.query) == ["sort=ASCENDING", "revision=r%2B1%2F%3D&sort=ASCENDING",
                                                         "revision=r2&sort=ASCENDING"])

        // Incremental: from the stored revision, only what changed since (nothing).
        let later = try await client.transactionHistory(transactionID: Answers.lineage, revision: "r3")
        #expect(later.transactions.isEmpty)
        #expect(later.revision == "r3")

        // Bounded: a client allowed 2 pages stops there and says where to continue.
        let bounded = try await APIKey.client(base: apple.base, http: http, maxHistoryPages: 2)
            .transactionHistory(transactionID: Answers.lineage)
        #expect(bounded.transactions.map(\.payload.transactionId) == Array(ids[0..<4]))
        #expect(bounded.revision == "r2")
        #expect(bounded.hasMore)
        await http.shutdown()
        await apple.stop()
    }

    @Test("a revision Apple refuses fails the history call as invalidRevision, sent once, so the caller can start over")
    func historyWithRefusedRevision() async throws {
        let page = Answers.historyPage([], revision: "r1", hasMore: false)
        let apple = try AppleServer([("GET", historyPath, { request in
            (request.query ?? "").contains("revision=")
                ? .json(400, #"{"errorCode":4000005,"errorMessage":"Invalid request revision."}"#) : .json(200, page)
        })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)
        let error = try await apiError {
            _ = try await client.transactionHistory(transactionID: Answers.lineage, revision: "gone")
        }
        #expect(error.code == .invalidRevision)
        #expect(!error.isRetryable)
        #expect(error.httpStatus == 400 && error.appleErrorCode == 4_000_005)
        #expect(apple.recorder.requests.map(\.query) == ["revision=gone&sort=ASCENDING"])
        // Without a revision the same customer's history reads.
        #expect(try await client.transactionHistory(transactionID: Answers.lineage).revision == "r1")
        await http.shutdown()
        await apple.stop()
    }

    @Test("hasMore without a new revision is an invalid response, not an endless loop")
    func historyWithoutRevision() async throws {
        let page = Answers.historyPage([], revision: "r1", hasMore: true)
        let apple = try AppleServer([("GET", historyPath, { _ in .json(200, page) })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)
        let error = try await apiError { _ = try await client.transactionHistory(transactionID: Answers.lineage) }
        #expect(error.code == .invalidResponse)
        #expect(!error.isRetryable)
        #expect(apple.recorder.requests.count == 2)
        await http.shutdown()
        await apple.stop()
    }

    /// One way Apple (or the network) can answer badly, and the classification it must get.
    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let body: String
        var retryAfter: String?
        let code: AppStoreAPIError.Code
        let retryable: Bool
        var wait: Duration?
        var appleCode: Int64?
        var fragment = ""

        var testDescription: String { name }
    }

    static let nowMilliseconds = milliseconds(Fixture.now)
    static let failures: [Failure] = [
        Failure(name: "429 with Retry-After as Apple sends it (UNIX ms)", status: 429,
                body: #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#, retryAfter: "\(nowMilliseconds + 2500)",
                code: .rateLimited, retryable: true, wait: .milliseconds(2500), appleCode: 4_290_000),
        Failure(name: "429 with Retry-After in seconds", status: 429, body: "", retryAfter: "7", code: .rateLimited,
                retryable: true, wait: .seconds(7)),
        Failure(name: "429 with Retry-After as a UNIX time in seconds", status: 429, body: "",
                retryAfter: "\(nowMilliseconds / 1000 + 30)", code: .rateLimited, retryable: true, wait: .seconds(30)),
        Failure(name: "429 with Retry-After in the past", status: 429, body: "", retryAfter: "\(nowMilliseconds - 10_000)",
                code: .rateLimited, retryable: true, wait: .zero),
        Failure(name: "429 with an absurd Retry-After is capped at an hour", status: 429, body: "",
                retryAfter: "\(nowMilliseconds + 86_400_000)", code: .rateLimited, retryable: true, wait: .seconds(3600)),
        Failure(name: "429 with an unreadable Retry-After", status: 429, body: "", retryAfter: "soon", code: .rateLimited,
                retryable: true),
        Failure(name: "500 GeneralInternal", status: 500, body: #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#,
                code: .serverError, retryable: true, appleCode: 5_000_000),
        Failure(name: "503 with Retry-After", status: 503, body: "", retryAfter: "3", code: .serverError, retryable: true,
                wait: .seconds(3)),
        Failure(name: "408 from an edge proxy", status: 408, body: "", code: .requestTimeout, retryable: true),
        Failure(name: "404 TransactionIdNotFound", status: 404,
                body: #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#, code: .transactionNotFound,
                retryable: false, appleCode: 4_040_010, fragment: "unknown in this environment"),
        Failure(name: "404 AccountNotFoundRetryable", status: 404,
                body: #"{"errorCode":4040002,"errorMessage":"Account not found. Please try again."}"#,
                code: .retryableAppleError, retryable: true, appleCode: 4_040_002),
        Failure(name: "404 OriginalTransactionIdNotFoundRetryable", status: 404, body: #"{"errorCode":4040006}"#,
                code: .retryableAppleError, retryable: true, appleCode: 4_040_006),
        Failure(name: "400 InvalidTransactionId", status: 400,
                body: #"{"errorCode":4000006,"errorMessage":"Invalid transaction id."}"#, code: .rejected, retryable: false,
                appleCode: 4_000_006, fragment: "Invalid transaction id."),
        Failure(name: "400 InvalidRequestRevision", status: 400,
                body: #"{"errorCode":4000005,"errorMessage":"Invalid request revision."}"#, code: .invalidRevision,
                retryable: false, appleCode: 4_000_005, fragment: "without one"),
        Failure(name: "401 Unauthorized", status: 401, body: "Unauthenticated", code: .unauthorized, retryable: false,
                fragment: "key id"),
        Failure(name: "200 that is not JSON", status: 200, body: "<html>", code: .invalidResponse, retryable: false),
        Failure(name: "200 without data", status: 200, body: #"{"environment":"Production"}"#, code: .invalidResponse,
                retryable: false, fragment: "no data"),
        Failure(name: "302 (redirects are not followed)", status: 302, body: "", code: .invalidResponse, retryable: false),
        Failure(name: "200 whose data is not an array", status: 200, body: #"{"data":"none"}"#, code: .invalidResponse,
                retryable: false, fragment: "expected an array"),
        Failure(name: "200 with a status as a string", status: 200,
                body: #"{"data":[{"lastTransactions":[{"status":"1"}]}]}"#, code: .invalidResponse, retryable: false,
                fragment: "status"),
        Failure(name: "200 with trailing data", status: 200, body: #"{"data":[]} []"#, code: .invalidResponse,
                retryable: false, fragment: "after the JSON value"),
    ]

    @Test("each failure is classified with its retryability, Retry-After and Apple's error", arguments: failures)
    func classification(failure: Failure) async throws {
        let apple = try AppleServer([("GET", statusesPath, { _ in
            var response = HTTPResponse.json(failure.status, failure.body)
            if let retryAfter = failure.retryAfter { response.headers.append(("retry-after", retryAfter)) }
            return response
        })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)
        let error = try await apiError { _ = try await client.subscriptionStatuses(transactionID: Answers.lineage) }
        #expect(error.code == failure.code)
        #expect(error.isRetryable == failure.retryable)
        #expect(error.retryAfter == failure.wait)
        #expect(error.appleErrorCode == failure.appleCode)
        #expect(error.httpStatus == (failure.status == 200 ? nil : failure.status))
        #expect(failure.fragment.isEmpty || error.message.contains(failure.fragment), "\(error.message)")
        #expect(error.message.contains(statusesPath))
        #expect(!error.message.contains("Bearer"))
        await http.shutdown()
        await apple.stop()
    }

    @Test("no listener is a retryable transport failure; an oversized body is a permanent one")
    func transport() async throws {
        let http = try HTTPClient()
        let closed = try AppleServer([])
        await closed.stop()
        let refused = try await apiError {
            _ = try await APIKey.client(base: closed.base, http: http).subscriptionStatuses(transactionID: Answers.lineage)
        }
        #expect(refused.code == .transport)
        #expect(refused.transport == .connectionRefused)
        #expect(refused.isRetryable)

        let huge = String(repeating: "x", count: 2 << 20)
        let apple = try AppleServer([("GET", statusesPath, { _ in .json(200, huge) })])
        let tooLarge = try await apiError {
            _ = try await APIKey.client(base: apple.base, http: http).subscriptionStatuses(transactionID: Answers.lineage)
        }
        #expect(tooLarge.code == .transport)
        #expect(tooLarge.transport == .bodyTooLarge)
        #expect(!tooLarge.isRetryable)
        await http.shutdown()
        await apple.stop()
    }

    @Test("a connection dropped during the TLS handshake retries; a certificate the client does not trust does not")
    func tlsFailures() async throws {
        let http = try HTTPClient()
        let listener = try HangUpListener(.reset)
        let dropped = try await apiError {
            _ = try await APIKey.client(base: "https://127.0.0.1:\(listener.port)", http: http)
                .subscriptionStatuses(transactionID: Answers.lineage)
        }
        listener.stop()
        #expect(dropped.code == .transport)
        #expect(dropped.transport == .tlsHandshake, "\(dropped)")
        #expect(dropped.isRetryable)

        let key = try PrivateKey.generate(.ecP256)
        var builder = CertificateBuilder(commonName: "127.0.0.1", notBefore: Date() - 3600, notAfter: Date() + 3600)
        builder.subjectAltNames = ["IP:127.0.0.1"]
        var configuration = HTTPServerConfiguration()
        configuration.tls = (certificatePEM: try builder.selfSigned(key: key).pem, privateKeyPEM: try key.pem())
        var router = HTTPRouter()
        router.route("GET", statusesPath) { _ in .json(200, "{}") }
        let selfSigned = try HTTPServer(configuration: configuration, router: router)
        let untrusted = try await apiError {
            _ = try await APIKey.client(base: "https://127.0.0.1:\(selfSigned.port)", http: http)
                .subscriptionStatuses(transactionID: Answers.lineage)
        }
        #expect(untrusted.code == .transport)
        #expect(untrusted.transport == .tls, "\(untrusted)")
        #expect(!untrusted.isRetryable)
        await http.shutdown()
        await selfSigned.stop(grace: .seconds(1))
    }

    @Test("a nested JWS the verifier refuses fails the call with the verifier's code", arguments: [
        ("signed by a foreign root", { @Sendable in try Answers.signed(Answers.transaction(), by: PKIs.foreign) },
         AppStoreVerificationError.Code.verificationFailure),
        ("another app's transaction", { @Sendable in try Answers.signed(Answers.transaction(["bundleId": "com.example.other"])) },
         .invalidAppIdentifier),
        ("a Sandbox transaction", { @Sendable in try Answers.signed(Answers.transaction(["environment": "Sandbox"])) }, .invalidEnvironment),
    ] as [(String, @Sendable () throws -> String, AppStoreVerificationError.Code)])
    func forgedNestedJWS(name: String, transaction: @Sendable () throws -> String, code: AppStoreVerificationError.Code) async throws {
        let status = Answers.statusResponse([("21000000", [Answers.entry(transaction: try transaction(),
                                                                         renewal: try Answers.signed(Answers.renewal()))])])
        let page = Answers.historyPage([try Answers.signed(Answers.transaction()), try transaction()], revision: "r1",
                                       hasMore: false)
        let apple = try AppleServer([("GET", statusesPath, { _ in .json(200, status) }),
                                     ("GET", historyPath, { _ in .json(200, page) })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)

        let statusError = try await apiError { _ = try await client.subscriptionStatuses(transactionID: Answers.lineage) }
        #expect(statusError.code == .verificationFailed)
        #expect(statusError.verification?.code == code)
        #expect(!statusError.isRetryable)
        #expect(statusError.message.contains("lastTransactions[0].signedTransactionInfo"))
        let historyError = try await apiError { _ = try await client.transactionHistory(transactionID: Answers.lineage) }
        #expect(historyError.verification?.code == code)
        #expect(historyError.message.contains("signedTransactions[1]"))
        await http.shutdown()
        await apple.stop()
    }

    @Test("an entry whose unsigned originalTransactionId disagrees with its signed transaction is refused")
    func entryDisagreesWithSignedPayload() async throws {
        let body = Answers.statusResponse([("21000000", [Answers.entry(original: "2000000000000777",
                                                                       transaction: try Answers.signed(Answers.transaction()),
                                                                       renewal: nil)])])
        let apple = try AppleServer([("GET", statusesPath, { _ in .json(200, body) })])
        let http = try HTTPClient()
        let error = try await apiError {
            _ = try await APIKey.client(base: apple.base, http: http).subscriptionStatuses(transactionID: Answers.lineage)
        }
        #expect(error.code == .invalidResponse)
        #expect(error.message.contains("2000000000000777"))
        await http.shutdown()
        await apple.stop()
    }

    @Test("consumption is a PUT of Apple's v2 JSON, accepted with 202")
    func consumptionSent() async throws {
        let apple = try AppleServer([("PUT", consumptionPath, { _ in HTTPResponse(status: 202) })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)
        try await client.sendConsumption(transactionID: Answers.lineage, request: consumption)

        let request = try #require(apple.recorder.requests.first)
        #expect(request.method == "PUT")
        #expect(request.header("content-type") == "application/json")
        let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
        #expect(Set(body.keys) == ["customerConsented", "deliveryStatus", "sampleContentProvided", "consumptionPercentage",
                                   "refundPreference"])
        #expect(body["customerConsented"] as? Bool == true)
        #expect(body["deliveryStatus"] as? String == "DELIVERED")
        #expect(body["sampleContentProvided"] as? Bool == false)
        #expect((body["consumptionPercentage"] as? NSNumber)?.intValue == 25_000)
        #expect(body["refundPreference"] as? String == "DECLINE")
        await http.shutdown()
        await apple.stop()
    }

    @Test("an invalid consumption request or transaction id is refused before anything is sent")
    func refusedBeforeSending() async throws {
        let apple = try AppleServer([("PUT", consumptionPath, { _ in HTTPResponse(status: 202) })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)
        var unconsented = consumption
        unconsented.customerConsented = false
        let error = try await apiError { try await client.sendConsumption(transactionID: Answers.lineage, request: unconsented) }
        #expect(error.code == .invalidRequest)
        #expect(!error.isRetryable)
        for id in ["", "../subscriptions/1", "1?x=1", "1%2F2", String(repeating: "1", count: 65)] {
            let error = try await apiError { try await client.sendConsumption(transactionID: id, request: consumption) }
            #expect(error.code == .invalidRequest, "\(id)")
        }
        #expect(apple.recorder.requests.isEmpty)
        await http.shutdown()
        await apple.stop()
    }

    @Test("Apple's rejection of a consumption answer carries its error code")
    func consumptionRejected() async throws {
        let apple = try AppleServer([("PUT", consumptionPath, { _ in
            .json(400, #"{"errorCode":4000043,"errorMessage":"Invalid request. The transaction is not consumable."}"#)
        })])
        let http = try HTTPClient()
        let client = try APIKey.client(base: apple.base, http: http)
        let error = try await apiError { try await client.sendConsumption(transactionID: Answers.lineage, request: consumption) }
        #expect(error.code == .rejected)
        #expect(error.appleErrorCode == 4_000_043)
        #expect(error.appleErrorMessage == "Invalid request. The transaction is not consumable.")
        await http.shutdown()
        await apple.stop()
    }

    @Test("calls beyond the burst are paced at the family's rate")
    func pacing() async throws {
        let status = try statusAnswer()
        let page = Answers.historyPage([], revision: "r1", hasMore: false)
        let apple = try AppleServer([("GET", statusesPath, { _ in .json(200, status) }),
                                     ("GET", historyPath, { _ in .json(200, page) })])
        let http = try HTTPClient()
        var limits = APIKey.generous
        limits.subscriptionStatuses = .init(perSecond: 10, burst: 2)
        let client = try APIKey.client(base: apple.base, http: http, limits: limits)

        // 2 go at once, the other 4 one every 100 ms: no schedule can finish in under 400 ms.
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 { group.addTask { _ = try await client.subscriptionStatuses(transactionID: Answers.lineage) } }
            try await group.waitForAll()
        }
        #expect(ContinuousClock.now - started >= .milliseconds(400))
        #expect(apple.recorder.requests.count == 6)
        await http.shutdown()
        await apple.stop()
    }

    @Test("a configuration that contradicts its verifier or Apple's limits is refused", arguments: [
        ("verifier for another bundle", { @Sendable (c: inout AppStoreAPIConfiguration) in c.bundleID = "com.example.other" }, "bundle id"),
        ("verifier for another environment", { @Sendable (c: inout AppStoreAPIConfiguration) in c.environment = .sandbox }, "environment"),
        ("token over 60 minutes", { @Sendable (c: inout AppStoreAPIConfiguration) in c.tokenLifetime = .seconds(3601) }, "60 minutes"),
        ("margin as long as the token", { @Sendable (c: inout AppStoreAPIConfiguration) in c.tokenRenewalMargin = .seconds(1200) },
         "renewal margin"),
        ("zero rate", { @Sendable (c: inout AppStoreAPIConfiguration) in c.rateLimits.consumption.perSecond = 0 }, "consumption"),
        ("ftp base URL", { @Sendable (c: inout AppStoreAPIConfiguration) in c.baseURL = "ftp://example.com" }, "http(s)"),
        ("P-384 key", { @Sendable (c: inout AppStoreAPIConfiguration) in c.privateKey = try PrivateKey.generate(.ecP384) }, "key"),
    ] as [(String, @Sendable (inout AppStoreAPIConfiguration) throws -> Void, String)])
    func invalidConfiguration(name: String, change: @Sendable (inout AppStoreAPIConfiguration) throws -> Void,
                              fragment: String) throws {
        var configuration = AppStoreAPIConfiguration(environment: .production, bundleID: Fixture.bundleID, keyID: APIKey.keyID,
                                                     issuerID: APIKey.issuerID, privateKey: try APIKey.key.get())
        try change(&configuration)
        let http = try HTTPClient()
        let error = #expect(throws: AppStoreAPIError.self) {
            try AppStoreAPIClient(configuration: configuration, verifier: try Verifiers.production(), httpClient: http)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
    }

    @Test("the default base URLs and rate limits follow the environment")
    func defaults() throws {
        let key = try APIKey.key.get()
        let production = AppStoreAPIConfiguration(environment: .production, bundleID: "b", keyID: "k", issuerID: "i",
                                                  privateKey: key)
        let sandbox = AppStoreAPIConfiguration(environment: .sandbox, bundleID: "b", keyID: "k", issuerID: "i", privateKey: key)
        #expect(production.baseURL == "https://api.storekit.apple.com")
        #expect(sandbox.baseURL == "https://api.storekit-sandbox.apple.com")
        for family in AppStoreEndpointFamily.allCases {
            #expect(production.rateLimits[family] == .init(perSecond: 50, burst: 50))
            #expect(sandbox.rateLimits[family] == .init(perSecond: 5, burst: 5))
        }
        #expect(production.tokenLifetime == .seconds(1200))
        #expect(production.maxHistoryPages == 50)
    }
}
