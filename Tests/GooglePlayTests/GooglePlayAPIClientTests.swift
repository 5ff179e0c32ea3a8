import Crypto
import Foundation
import GooglePlay
import HTTP
import StoreModel
import Synchronization
import TestSupport
import Testing

private let subscriptionPath = "\(PlayServer.applicationPath)/purchases/subscriptionsv2/tokens/\(Play.token)"
private let orderPath = "\(PlayServer.applicationPath)/orders/\(Play.orderID)"

/// Answers `body` with 200 for the subscription of `Play.token`, 404 for anything else.
private func serving(_ body: Data, at path: String = subscriptionPath) -> @Sendable (HTTPRequest) async -> HTTPResponse {
    { request in request.path == path ? HTTPResponse(status: 200, headers: [("content-type", "application/json")], body: body)
        : .json(404, #"{"error":{"code":404,"message":"Not found","errors":[{"reason":"notFound"}]}}"#) }
}

/// Guards `GooglePlayAPIClient` against a real HTTP server on loopback standing in for Google's token endpoint and
/// the Play Developer API: the service-account assertion, access-token caching and refresh, the requests sent
/// (paths, headers, bodies), decoding of Google's documented shapes, the classification of every failure, and
/// pacing.
@Suite("Google Play API client")
struct GooglePlayAPIClientTests {
    @Test("subscriptionsv2.get: the documented fields are decoded, times with fractional seconds, the test marker by presence")
    func subscription() async throws {
        let body = Play.subscription([
            "linkedPurchaseToken": Play.oldToken, "testPurchase": [String: Any](),
            "pausedStateContext": ["autoResumeTime": "2025-07-01T00:00:00.123456789Z"],
            "canceledStateContext": ["userInitiatedCancellation": ["cancelTime": "2025-05-21T08:30:00.5Z",
                                                                   "cancelSurveyResult": ["reason": "CANCEL_SURVEY_REASON_OTHERS"]]],
        ], lineItems: [Play.lineItem(["offerDetails": ["basePlanId": Play.basePlan, "offerId": "intro-offer"]])])
        let google = try PlayServer(api: serving(body))
        let http = try HTTPClient()
        let client = try ServiceAccount.client(google, http: http)

        let purchase = try await client.subscription(token: Play.token)
        #expect(purchase.kind == "androidpublisher#subscriptionPurchaseV2")
        #expect(purchase.regionCode == "US")
        #expect(purchase.startTime == Play.started)
        #expect(purchase.subscriptionState == "SUBSCRIPTION_STATE_ACTIVE")
        #expect(purchase.latestOrderId == Play.orderID)
        #expect(purchase.linkedPurchaseToken == Play.oldToken)
        #expect(purchase.isTestPurchase)
        #expect(purchase.acknowledgementState == "ACKNOWLEDGEMENT_STATE_PENDING")
        #expect(purchase.externalAccountIdentifiers?.obfuscatedExternalAccountId == Play.accountToken)
        #expect(purchase.externalAccountIdentifiers?.obfuscatedExternalProfileId == "profile-1")
        #expect(purchase.pausedStateContext?.autoResumeTime == Date(timeIntervalSince1970: 1_751_328_000.123456))
        #expect(purchase.canceledStateContext?.initiator == "userInitiatedCancellation")
        #expect(purchase.canceledStateContext?.cancelTime == Date(timeIntervalSince1970: 1_747_816_200.5))
        let item = try #require(purchase.lineItems.first)
        #expect(purchase.lineItems.count == 1)
        #expect(item.productId == Play.monthly)
        #expect(item.expiryTime == Play.expires)
        #expect(item.autoRenewingPlan?.autoRenewEnabled == true)
        #expect(item.autoRenewingPlan?.recurringPrice == GooglePlayMoney(currencyCode: "USD", units: 9, nanos: 990_000_000))
        #expect(item.offerDetails?.basePlanId == Play.basePlan)
        #expect(item.offerDetails?.offerId == "intro-offer")
        #expect(item.offerPhase == "basePrice")
        #expect(item.latestSuccessfulOrderId == Play.orderID)
        // Kept as sent, whitespace removed, unmodeled fields included.
        let compact = try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: body),
                                                 options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(Play.text(purchase.json) == Play.text(compact))
        #expect(Play.text(purchase.json).contains(#""futureField":{"kept":true}"#))

        let request = try #require(google.apiRequests.requests.first)
        #expect(request.method == "GET")
        #expect(request.path == subscriptionPath)
        #expect(request.query == nil)
        #expect(request.header("accept") == "application/json")
        #expect(request.header("authorization") == "Bearer ya29.test-1")
        await http.shutdown()
        await google.stop()
    }

    @Test("a purchase without testPurchase is not a test purchase, and missing optional objects stay nil")
    func minimalSubscription() async throws {
        let body = Play.subscription(["externalAccountIdentifiers": nil, "latestOrderId": nil],
                                     lineItems: [Play.lineItem(["autoRenewingPlan": nil, "offerPhase": nil])])
        let google = try PlayServer(api: serving(body))
        let http = try HTTPClient()
        let purchase = try await ServiceAccount.client(google, http: http).subscription(token: Play.token)
        #expect(!purchase.isTestPurchase)
        #expect(purchase.externalAccountIdentifiers == nil)
        #expect(purchase.canceledStateContext == nil)
        #expect(purchase.lineItems.first?.autoRenewingPlan == nil)
        #expect(purchase.lineItems.first?.offerPhase == nil)
        await http.shutdown()
        await google.stop()
    }

    @Test("the token endpoint receives a form-encoded JWT-bearer grant whose RS256 assertion verifies with the key")
    func assertion() async throws {
        let google = try PlayServer(api: serving(Play.subscription()))
        let http = try HTTPClient()
        let clock = TestClock(Play.fetchedAt)
        _ = try await ServiceAccount.client(google, http: http, clock: clock).subscription(token: Play.token)

        let request = try #require(google.tokenRequests.requests.first)
        #expect(google.tokenRequests.requests.count == 1)
        #expect(request.method == "POST")
        #expect(request.header("content-type") == "application/x-www-form-urlencoded")
        #expect(String(decoding: request.body, as: UTF8.self).hasPrefix(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        let form = PlayServer.form(request)
        #expect(Set(form.keys) == ["grant_type", "assertion"])
        #expect(form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        let jws = try CompactJWS(try #require(form["assertion"]))
        try jws.verify(.rs256, with: TestKeys.a.publicKey)
        #expect(throws: CryptoError.self) { try jws.verify(.rs256, with: TestKeys.b.publicKey) }
        #expect(jws.header.alg == "RS256")
        #expect(jws.header.kid == Play.keyID)
        let claims = try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
        #expect(claims["iss"] as? String == Play.clientEmail)
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/androidpublisher")
        #expect(claims["aud"] as? String == google.tokenURI)
        let iat = try #require((claims["iat"] as? NSNumber)?.int64Value)
        // Set back 10 s for hosts whose clock runs slightly ahead of Google's.
        #expect(iat == Int64(Play.fetchedAt.timeIntervalSince1970) - 10)
        #expect((claims["exp"] as? NSNumber)?.int64Value == iat + 3600)
        #expect(!String(decoding: request.body, as: UTF8.self).contains("PRIVATE KEY"))
        await http.shutdown()
        await google.stop()
    }

    @Test("one access token serves every endpoint and concurrent callers until 60 s before expires_in runs out")
    func tokenReuse() async throws {
        let gate = Gate()
        let issued = Mutex(0)
        let google = try PlayServer(token: { _ in
            await gate.wait()
            let number = issued.withLock { count in
                count += 1
                return count
            }
            return .json(200, #"{"access_token":"ya29.shared-\#(number)","expires_in":"3599","token_type":"Bearer"}"#)
        }, api: { request in
            if request.path == orderPath { return HTTPResponse(status: 200, body: Play.order()) }
            if request.path.hasSuffix(":acknowledge") { return HTTPResponse(status: 204) }
            return HTTPResponse(status: 200, body: Play.subscription())
        })
        let http = try HTTPClient()
        let clock = TestClock(Play.fetchedAt)
        let client = try ServiceAccount.client(google, http: http, clock: clock)

        // Ten callers find no token at once; the token endpoint holds the first request until all have started.
        let started = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    started.increment()
                    _ = try await client.subscription(token: Play.token)
                }
            }
            try await eventually("the first token request") { !google.tokenRequests.requests.isEmpty }
            try await eventually("all callers started") { started.value == 10 }
            gate.open()
            try await group.waitForAll()
        }
        _ = try await client.order(id: Play.orderID)
        try await client.acknowledge(subscriptionID: Play.monthly, token: Play.token)
        clock.advance(by: 3599 - 60 - 1)  // 1 s before the renewal point
        _ = try await client.subscription(token: Play.token)
        #expect(google.tokenRequests.requests.count == 1)
        #expect(Set(google.apiRequests.bearerTokens) == ["ya29.shared-1"])
        #expect(google.apiRequests.requests.count == 13)

        clock.advance(by: 1)
        _ = try await client.subscription(token: Play.token)
        _ = try await client.subscription(token: Play.token)
        #expect(google.tokenRequests.requests.count == 2)
        #expect(google.apiRequests.bearerTokens.suffix(2) == ["ya29.shared-2", "ya29.shared-2"])
        await http.shutdown()
        await google.stop()
    }

    @Test("a 401 discards the token and repeats the call once with a fresh one")
    func unauthorizedRefreshesOnce() async throws {
        let google = try PlayServer(api: { request in
            request.header("authorization") == "Bearer ya29.test-1"
                ? .json(401, #"{"error":{"code":401,"message":"Request had invalid authentication credentials."}}"#)
                : HTTPResponse(status: 200, body: Play.subscription())
        })
        let http = try HTTPClient()
        let client = try ServiceAccount.client(google, http: http)
        _ = try await client.subscription(token: Play.token)
        _ = try await client.subscription(token: Play.token)
        #expect(google.tokenRequests.requests.count == 2)
        #expect(google.apiRequests.bearerTokens == ["ya29.test-1", "ya29.test-2", "ya29.test-2"])
        await http.shutdown()
        await google.stop()
    }

    @Test("a 401 that survives the refresh is permanent and points at Play Console permissions")
    func unauthorizedTwice() async throws {
        let google = try PlayServer(api: { _ in .json(401, #"{"error":{"code":401,"message":"Invalid Credentials"}}"#) })
        let http = try HTTPClient()
        let client = try ServiceAccount.client(google, http: http)
        let error = try await apiError { _ = try await client.subscription(token: Play.token) }
        #expect(error.code == .unauthorized)
        #expect(!error.isRetryable)
        #expect(error.message.contains("Play Console"))
        #expect(google.tokenRequests.requests.count == 2)
        #expect(google.apiRequests.requests.count == 2)
        await http.shutdown()
        await google.stop()
    }

    /// One way Google (or the network) can answer an API call badly, and the classification it must get.
    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let body: String
        var retryAfter: String?
        let code: GooglePlayAPIError.Code
        let retryable: Bool
        var wait: Duration?
        var reason: String?
        var fragment = ""

        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(name: "410 token expired too long ago", status: 410,
                body: #"{"error":{"code":410,"message":"The subscription purchase is no longer available for query because it has been expired for too long.","errors":[{"domain":"androidpublisher","reason":"subscriptionPurchaseNoLongerAvailable"}]}}"#,
                code: .gone, retryable: false, reason: "subscriptionPurchaseNoLongerAvailable", fragment: "no longer available"),
        Failure(name: "404 unknown token", status: 404,
                body: #"{"error":{"code":404,"message":"The purchase token was not found.","errors":[{"reason":"notFound"}]}}"#,
                code: .notFound, retryable: false, reason: "notFound", fragment: "The purchase token was not found."),
        Failure(name: "403 permission denied", status: 403,
                body: #"{"error":{"code":403,"message":"The current user has insufficient permissions to perform the requested operation.","errors":[{"domain":"androidpublisher","reason":"permissionDenied"}]}}"#,
                code: .forbidden, retryable: false, reason: "permissionDenied", fragment: "Users and permissions"),
        Failure(name: "403 that reports a quota, as Google's older APIs do", status: 403,
                body: #"{"error":{"code":403,"message":"Rate Limit Exceeded","errors":[{"domain":"usageLimits","reason":"userRateLimitExceeded"}]}}"#,
                code: .rateLimited, retryable: true, reason: "userRateLimitExceeded", fragment: "over a Google quota"),
        Failure(name: "429 with Retry-After in seconds", status: 429,
                body: #"{"error":{"code":429,"message":"Quota exceeded","errors":[{"reason":"rateLimitExceeded"}]}}"#,
                retryAfter: "7", code: .rateLimited, retryable: true, wait: .seconds(7), reason: "rateLimitExceeded"),
        Failure(name: "429 without Retry-After", status: 429, body: "", code: .rateLimited, retryable: true),
        Failure(name: "503 with Retry-After as an HTTP date", status: 503, body: "",
                retryAfter: "Thu, 22 May 2025 10:00:30 GMT", code: .serverError, retryable: true, wait: .seconds(30)),
        Failure(name: "503 with an absurd Retry-After is capped at an hour", status: 503, body: "", retryAfter: "86400",
                code: .serverError, retryable: true, wait: .seconds(3600)),
        Failure(name: "500 backend error", status: 500,
                body: #"{"error":{"code":500,"message":"Backend Error","errors":[{"reason":"backendError"}]}}"#,
                code: .serverError, retryable: true, reason: "backendError"),
        Failure(name: "400 malformed token", status: 400,
                body: #"{"error":{"code":400,"message":"Invalid Value","errors":[{"reason":"invalid"}]}}"#,
                code: .rejected, retryable: false, reason: "invalid"),
        Failure(name: "404 whose error body has a field of the wrong kind: read as no body", status: 404,
                body: #"{"error":{"code":404,"message":"gone","errors":{"reason":"notFound"}}}"#,
                code: .notFound, retryable: false),
        Failure(name: "403 whose error body repeats a field: the last one wins", status: 403,
                body: #"{"error":{"message":"x","errors":[{"reason":"notFound","reason":"quotaExceeded"}],"details":[{"@type":"t"}]}}"#,
                code: .rateLimited, retryable: true, reason: "quotaExceeded", fragment: "quotaExceeded \"x\""),
        Failure(name: "200 that is not JSON", status: 200, body: "<html>", code: .invalidResponse, retryable: false,
                fragment: "malformed JSON at byte 0"),
        Failure(name: "200 with a time that is not RFC 3339", status: 200,
                body: #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"p","expiryTime":"1747735200000"}]}"#,
                code: .invalidResponse, retryable: false, fragment: #"bad lineItems[0].expiryTime: expected an RFC 3339 time, found "1747735200000""#),
        Failure(name: "200 with lineItems that are not an array", status: 200, body: #"{"lineItems":{}}"#,
                code: .invalidResponse, retryable: false, fragment: "bad lineItems: expected an array, found an object"),
        Failure(name: "302 (redirects are not followed)", status: 302, body: "", code: .invalidResponse, retryable: false),
    ]

    @Test("each API failure is classified with its retryability, Retry-After and Google's reason", arguments: failures)
    func classification(failure: Failure) async throws {
        let google = try PlayServer(api: { _ in
            var response = HTTPResponse.json(failure.status, failure.body)
            if let retryAfter = failure.retryAfter { response.headers.append(("retry-after", retryAfter)) }
            return response
        })
        let http = try HTTPClient()
        let clock = TestClock(Date(timeIntervalSince1970: 1_747_908_000))  // Thu, 22 May 2025 10:00:00 GMT
        let client = try ServiceAccount.client(google, http: http, clock: clock)
        let error = try await apiError { _ = try await client.subscription(token: Play.token) }
        #expect(error.code == failure.code)
        #expect(error.isRetryable == failure.retryable)
        #expect(error.retryAfter == failure.wait)
        #expect(error.reason == failure.reason)
        #expect(error.httpStatus == failure.status)
        #expect(failure.fragment.isEmpty || error.message.contains(failure.fragment), "\(error.message)")
        #expect(error.message.contains("/purchases/subscriptionsv2/tokens/"))
        #expect(!error.message.contains("ya29"))
        #expect(google.apiRequests.requests.count == 1)
        await http.shutdown()
        await google.stop()
    }

    /// One way the token endpoint can refuse, and the classification it must get.
    struct TokenFailure: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let body: String
        var retryAfter: String?
        let code: GooglePlayAPIError.Code
        let retryable: Bool
        var fragment = ""

        var testDescription: String { name }
    }

    static let tokenFailures: [TokenFailure] = [
        TokenFailure(name: "invalid_grant for clock skew", status: 400,
                     body: #"{"error":"invalid_grant","error_description":"Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values and use a clock with skew to account for clock differences between systems."}"#,
                     code: .invalidGrant, retryable: false, fragment: "clock"),
        TokenFailure(name: "invalid_grant for a deleted key", status: 400,
                     body: #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#,
                     code: .invalidGrant, retryable: false, fragment: "key \(Play.keyID) of \(Play.clientEmail)"),
        TokenFailure(name: "invalid_client", status: 401,
                     body: #"{"error":"invalid_client","error_description":"The OAuth client was not found."}"#,
                     code: .tokenRejected, retryable: false, fragment: "invalid_client"),
        TokenFailure(name: "503 with Retry-After", status: 503, body: "", retryAfter: "5", code: .tokenUnavailable,
                     retryable: true),
        TokenFailure(name: "200 without access_token", status: 200, body: #"{"expires_in":3599,"token_type":"Bearer"}"#,
                     code: .tokenInvalidResponse, retryable: false, fragment: "access_token"),
        TokenFailure(name: "200 with expires_in 0", status: 200, body: #"{"access_token":"ya29.x","expires_in":0}"#,
                     code: .tokenInvalidResponse, retryable: false, fragment: "expires_in"),
        TokenFailure(name: "200 with an access token that would break the header", status: 200,
                     body: #"{"access_token":"ya29.x\r\nX-Evil: 1","expires_in":3599}"#, code: .tokenInvalidResponse,
                     retryable: false),
        TokenFailure(name: "200 with another token type", status: 200,
                     body: #"{"access_token":"ya29.x","expires_in":3599,"token_type":"MAC"}"#, code: .tokenInvalidResponse,
                     retryable: false, fragment: "Bearer"),
        TokenFailure(name: "200 that is not JSON", status: 200, body: "ok", code: .tokenInvalidResponse, retryable: false),
        TokenFailure(name: "200 with a numeric access token", status: 200, body: #"{"access_token":29,"expires_in":3599}"#,
                     code: .tokenInvalidResponse, retryable: false, fragment: "not a token JSON object"),
        TokenFailure(name: "200 with a fractional expires_in", status: 200, body: #"{"access_token":"ya29.x","expires_in":3599.5}"#,
                     code: .tokenInvalidResponse, retryable: false, fragment: "not a token JSON object"),
        TokenFailure(name: "200 with expires_in a string of words", status: 200,
                     body: #"{"access_token":"ya29.x","expires_in":"an hour"}"#, code: .tokenInvalidResponse, retryable: false),
        TokenFailure(name: "400 whose error is not a string: classified by the status", status: 400,
                     body: #"{"error":{"code":"invalid_grant"}}"#, code: .tokenRejected, retryable: false),
    ]

    @Test("each token endpoint failure has its own code, and no API request is sent without a token",
          arguments: tokenFailures)
    func tokenFailure(failure: TokenFailure) async throws {
        let google = try PlayServer(token: { _ in
            var response = HTTPResponse.json(failure.status, failure.body)
            if let retryAfter = failure.retryAfter { response.headers.append(("retry-after", retryAfter)) }
            return response
        }, api: serving(Play.subscription()))
        let http = try HTTPClient()
        let client = try ServiceAccount.client(google, http: http)
        let error = try await apiError { _ = try await client.subscription(token: Play.token) }
        #expect(error.code == failure.code)
        #expect(error.isRetryable == failure.retryable)
        #expect(failure.fragment.isEmpty || error.message.contains(failure.fragment), "\(error.message)")
        #expect(!error.message.contains("eyJ"), "the assertion never appears in messages")
        #expect(google.apiRequests.requests.isEmpty)
        // A failed fetch is not cached: the next call asks again.
        _ = try? await client.subscription(token: Play.token)
        #expect(google.tokenRequests.requests.count == 2)
        await http.shutdown()
        await google.stop()
    }

    @Test("no listener is a retryable transport failure, for the API and for the token endpoint")
    func transport() async throws {
        let http = try HTTPClient()
        let closed = try PlayServer(api: serving(Play.subscription()))
        await closed.stop()
        let refused = try await apiError { _ = try await ServiceAccount.client(closed, http: http).subscription(token: Play.token) }
        #expect(refused.code == .tokenUnavailable)
        #expect(refused.transport == .connectionRefused)
        #expect(refused.isRetryable)

        let google = try PlayServer(api: serving(Play.subscription()))
        var configuration = ServiceAccount.configuration(google)
        configuration.baseURL = closed.base
        let client = try GooglePlayAPIClient(configuration: configuration, httpClient: http, now: { Play.fetchedAt })
        let apiRefused = try await apiError { _ = try await client.subscription(token: Play.token) }
        #expect(apiRefused.code == .transport)
        #expect(apiRefused.transport == .connectionRefused)
        #expect(apiRefused.isRetryable)
        await http.shutdown()
        await google.stop()
    }

    @Test("orders.get: the exact total, tax and refund history of one charge")
    func order() async throws {
        let body = Play.order(["state": "PARTIALLY_REFUNDED",
                               "total": ["currencyCode": "JPY", "units": 1200],
                               "tax": ["currencyCode": "JPY", "units": "109", "nanos": 90_000_000],
                               "orderHistory": ["processedEvent": ["eventTime": "2025-05-20T10:00:00Z"],
                                                "partialRefundEvents": [["createTime": "2025-05-25T10:00:00Z",
                                                                         "processTime": "2025-05-25T10:05:00.000000001Z",
                                                                         "state": "PROCESSED_SUCCESSFULLY",
                                                                         "refundDetails": ["total": ["currencyCode": "JPY", "units": "300"]]]]]])
        let google = try PlayServer(api: serving(body, at: orderPath))
        let http = try HTTPClient()
        let order = try await ServiceAccount.client(google, http: http).order(id: Play.orderID)
        #expect(order.orderId == Play.orderID)
        #expect(order.purchaseToken == Play.token)
        #expect(order.state == "PARTIALLY_REFUNDED")
        #expect(order.createTime == Play.started)
        #expect(try order.total?.money() == Money(minorUnits: 1200, currency: "JPY"))
        #expect(order.tax == GooglePlayMoney(currencyCode: "JPY", units: 109, nanos: 90_000_000))
        #expect(try order.developerRevenueInBuyerCurrency?.money() == Money(minorUnits: 779, currency: "USD"))
        #expect(order.orderDetails?.taxInclusive == true)
        let partial = try #require(order.orderHistory?.partialRefundEvents?.first)
        #expect(partial.processTime == Date(timeIntervalSince1970: 1_748_167_500))
        #expect(try partial.refundDetails?.total?.money() == Money(minorUnits: 300, currency: "JPY"))
        let line = try #require(order.lineItems?.first)
        #expect(line.productId == Play.monthly)
        #expect(line.subscriptionDetails?.basePlanId == Play.basePlan)
        #expect(line.subscriptionDetails?.servicePeriodStartTime == Play.started)
        #expect(line.subscriptionDetails?.servicePeriodEndTime == Play.expires)
        #expect(google.apiRequests.requests.first?.path == orderPath)
        await http.shutdown()
        await google.stop()
    }

    @Test("an order answer for another order id is refused")
    func orderMismatch() async throws {
        let google = try PlayServer(api: serving(Play.order(id: "GPA.0000-0000-0000-00000"), at: orderPath))
        let http = try HTTPClient()
        let error = try await apiError { _ = try await ServiceAccount.client(google, http: http).order(id: Play.orderID) }
        #expect(error.code == .invalidResponse)
        #expect(error.message.contains("GPA.0000-0000-0000-00000"))
        await http.shutdown()
        await google.stop()
    }

    @Test("acknowledge is a POST of a JSON object to the v1 path with :acknowledge; 2xx is done",
          arguments: [(nil, "{}", 204), ("payload-1", #"{"developerPayload":"payload-1"}"#, 200)] as [(String?, String, Int)])
    func acknowledge(payload: String?, body: String, status: Int) async throws {
        let google = try PlayServer(api: { _ in HTTPResponse(status: status) })
        let http = try HTTPClient()
        try await ServiceAccount.client(google, http: http).acknowledge(subscriptionID: Play.monthly, token: Play.token,
                                                                        developerPayload: payload)
        let request = try #require(google.apiRequests.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "\(PlayServer.applicationPath)/purchases/subscriptions/\(Play.monthly)/tokens/\(Play.token):acknowledge")
        #expect(request.header("content-type") == "application/json")
        #expect(String(decoding: request.body, as: UTF8.self) == body)
        await http.shutdown()
        await google.stop()
    }

    @Test("voidedpurchases.list: type=1 with the time window, records with string numbers, the next page token")
    func voidedPurchases() async throws {
        let first = #"""
        {"pageInfo":{"totalResults":2,"resultPerPage":1,"startIndex":0},"tokenPagination":{"nextPageToken":"next/page+1="},
         "voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-1","orderId":"GPA.1111-2222-3333-44444..2",
          "purchaseTimeMillis":"1747735200000","voidedTimeMillis":"1748000000000","voidedSource":"2","voidedReason":"7"}]}
        """#
        let last = #"{"voidedPurchases":[{"orderId":"GPA.5","voidedTimeMillis":1748000001000,"voidedReason":1,"voidedQuantity":1}]}"#
        let google = try PlayServer(api: { request in
            .json(200, request.query?.contains("token=") == true ? last : first)
        })
        let http = try HTTPClient()
        let client = try ServiceAccount.client(google, http: http)
        let page = try await client.voidedPurchases(startTime: Date(timeIntervalSince1970: 1_747_000_000.5))
        #expect(page.nextPageToken == "next/page+1=")
        let record = try #require(page.voidedPurchases.first)
        #expect(record.orderId == "GPA.1111-2222-3333-44444..2")
        #expect(record.purchaseToken == "tok-1")
        #expect(record.purchaseTimeMillis == 1_747_735_200_000)
        #expect(record.voidedTimeMillis == 1_748_000_000_000)
        #expect(record.voidedSource == 2)
        #expect(record.voidedReason == 7)
        #expect(record.voidedQuantity == nil)
        let voided = try #require(VoidedOrder(record, listedBy: .now))
        #expect(voided.voidedAt == Date(timeIntervalSince1970: 1_748_000_000))
        #expect(voided.reason == "CHARGEBACK")
        #expect(!voided.isPartial)

        let next = try await client.voidedPurchases(token: "next/page+1=")
        #expect(next.nextPageToken == nil)
        #expect(next.voidedPurchases.first?.voidedQuantity == 1)
        #expect(next.voidedPurchases.first.flatMap { VoidedOrder($0, listedBy: .now) }?.isPartial == true)

        let queries = google.apiRequests.requests.map(\.query)
        #expect(queries == ["type=1&maxResults=1000&startTime=1747000000500", "type=1&maxResults=1000&token=next%2Fpage%2B1%3D"])
        #expect(google.apiRequests.requests.allSatisfy { $0.path == "\(PlayServer.applicationPath)/purchases/voidedpurchases" })
        await http.shutdown()
        await google.stop()
    }

    @Test("a next page token that repeats the one asked for is an invalid response, not an endless loop")
    func voidedPagingLoop() async throws {
        let google = try PlayServer(api: { _ in .json(200, #"{"tokenPagination":{"nextPageToken":"same"},"voidedPurchases":[]}"#) })
        let http = try HTTPClient()
        let error = try await apiError { _ = try await ServiceAccount.client(google, http: http).voidedPurchases(token: "same") }
        #expect(error.code == .invalidResponse)
        await http.shutdown()
        await google.stop()
    }

    @Test("identifiers that could change the path are refused before anything is sent", arguments: [
        "", ".", "..", "tok/../../orders/x", "tok?fields=x", "tok%2Fx", "tok:acknowledge", "tok en", "tök",
        String(repeating: "a", count: 4097),
    ])
    func refusedIdentifiers(value: String) async throws {
        let google = try PlayServer(api: serving(Play.subscription()))
        let http = try HTTPClient()
        let client = try ServiceAccount.client(google, http: http)
        let subscription = try await apiError { _ = try await client.subscription(token: value) }
        #expect(subscription.code == .invalidRequest)
        let order = try await apiError { _ = try await client.order(id: value) }
        #expect(order.code == .invalidRequest)
        let acknowledge = try await apiError { try await client.acknowledge(subscriptionID: value, token: Play.token) }
        #expect(acknowledge.code == .invalidRequest)
        #expect(!subscription.isRetryable)
        #expect(google.apiRequests.requests.isEmpty)
        #expect(google.tokenRequests.requests.isEmpty)
        await http.shutdown()
        await google.stop()
    }

    @Test("calls beyond the burst are paced at the bucket's per-minute rate")
    func pacing() async throws {
        let google = try PlayServer(api: { request in
            request.path == orderPath ? HTTPResponse(status: 200, body: Play.order()) : HTTPResponse(status: 200, body: Play.subscription())
        })
        let http = try HTTPClient()
        var limits = ServiceAccount.generous
        limits.subscriptions = .init(perMinute: 600, burst: 2)
        let client = try ServiceAccount.client(google, http: http, limits: limits)
        _ = try await client.order(id: Play.orderID)  // fetches the token; orders are another bucket

        // 2 go at once, the other 4 one every 100 ms: no schedule can finish in under 400 ms.
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 { group.addTask { _ = try await client.subscription(token: Play.token) } }
            try await group.waitForAll()
        }
        #expect(ContinuousClock.now - started >= .milliseconds(400))
        #expect(google.apiRequests.requests.count == 7)
        await http.shutdown()
        await google.stop()
    }

    @Test("a slot beyond the maximum wait fails at once as retryable rate limiting, without a request")
    func pacingRefusal() async throws {
        let google = try PlayServer(api: serving(Play.subscription()))
        let http = try HTTPClient()
        var limits = ServiceAccount.generous
        limits.subscriptions = .init(perMinute: 1, burst: 1)
        limits.maximumWait = .seconds(1)
        let client = try ServiceAccount.client(google, http: http, limits: limits)
        _ = try await client.subscription(token: Play.token)
        let error = try await apiError { _ = try await client.subscription(token: Play.token) }
        #expect(error.code == .rateLimited)
        #expect(error.isRetryable)
        #expect(try #require(error.retryAfter) > .seconds(50))
        #expect(google.apiRequests.requests.count == 1)
        await http.shutdown()
        await google.stop()
    }

    @Test("the observer sees every request with its family and status, the token endpoint's included")
    func observer() async throws {
        let calls = Mutex<[String]>([])
        let google = try PlayServer(api: { request in
            request.path == orderPath ? .json(404, "{}") : HTTPResponse(status: 200, body: Play.subscription())
        })
        let http = try HTTPClient()
        let client = try ServiceAccount.client(google, http: http, observe: { call in
            calls.withLock { $0.append("\(call.family.rawValue) \(call.status.map(String.init) ?? "none")") }
        })
        _ = try await client.subscription(token: Play.token)
        _ = try? await client.order(id: Play.orderID)
        #expect(calls.withLock { $0 } == ["access_token 200", "subscriptions 200", "orders 404"])
        await http.shutdown()
        await google.stop()
    }

    @Test("a configuration Google would refuse is refused when the client is made", arguments: [
        ("package name with a slash", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.packageName = "com.example/x" }, "package name"),
        ("empty package name", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.packageName = "" }, "package name"),
        ("email without @", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.clientEmail = "play-api" }, "client email"),
        ("EC key", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.privateKey = try PrivateKey.generate(.ecP256) }, "RSA"),
        ("ftp base URL", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.baseURL = "ftp://example.com" }, "base URL"),
        ("token URI with a query", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.tokenURI = "https://x/token?a=b" }, "token URI"),
        ("negative margin", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.tokenRenewalMargin = .seconds(-1) }, "margin"),
        ("zero rate", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.rateLimits.orders.perMinute = 0 }, "orders"),
        ("zero burst", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.rateLimits.voidedPurchases.burst = 0 }, "voided_purchases"),
        ("zero timeout", { @Sendable (c: inout GooglePlayAPIConfiguration) in c.requestTimeout = .zero }, "timeout"),
    ] as [(String, @Sendable (inout GooglePlayAPIConfiguration) throws -> Void, String)])
    func invalidConfiguration(name: String, change: @Sendable (inout GooglePlayAPIConfiguration) throws -> Void,
                              fragment: String) throws {
        var configuration = GooglePlayAPIConfiguration(packageName: Play.packageName, clientEmail: Play.clientEmail,
                                                       privateKey: TestKeys.a)
        try change(&configuration)
        let http = try HTTPClient()
        let error = #expect(throws: GooglePlayAPIError.self) {
            try GooglePlayAPIClient(configuration: configuration, httpClient: http)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
    }

    @Test("the defaults are Google's hosts and 90 % of its per-minute quotas, the rest as burst")
    func defaults() {
        let configuration = GooglePlayAPIConfiguration(packageName: Play.packageName, clientEmail: Play.clientEmail,
                                                       privateKey: TestKeys.a)
        #expect(configuration.baseURL == "https://androidpublisher.googleapis.com")
        #expect(configuration.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(configuration.tokenRenewalMargin == .seconds(60))
        for family in [GooglePlayEndpointFamily.subscriptions, .orders, .subscriptionUpdates] {
            #expect(configuration.rateLimits[family] == .init(perMinute: 2700, burst: 300))
        }
        #expect(configuration.rateLimits.voidedPurchases == .init(perMinute: 54, burst: 1))
        #expect(configuration.rateLimits[.accessToken] == nil)
        let half = configuration.rateLimits.scaled(by: 0.5)
        #expect(half.orders == .init(perMinute: 1350, burst: 150))
        #expect(half.voidedPurchases == .init(perMinute: 27, burst: 1))
    }
}
