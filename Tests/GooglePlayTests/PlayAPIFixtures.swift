import Crypto
import Foundation
import GooglePlay
import HTTP
import Synchronization
import TestSupport

/// Field changes to a JSON object: a value sets the field, nil removes it.
typealias Changes = [String: Any?]

/// Google-shaped answers for the API client and snapshot translator tests: field names exactly as Google's
/// discovery document spells them, times as RFC 3339 strings with fractional seconds, int64 values as strings,
/// pretty-printed as Google sends them by default.
enum Play {
    static let packageName = "com.example.storesync"
    static let clientEmail = "play-api@storesync-prod.iam.gserviceaccount.com"
    static let keyID = "5f1c0a2b3d4e5f60718293a4b5c6d7e8f9012345"
    static let token = "kfcbnmoplkjhgfdsaqwerty.AO-J1OxYz8nA_kq3Vt5hRcW9m2LpQe7sDfGhJkLzXcVbNm1234567890abcdefghijkl"
    static let oldToken = "aaaabbbbccccddddeeeeffff.AO-J1OzOldTokenOfTheSameLineage_0987654321"
    static let monthly = "com.example.storesync.monthly"
    static let addOn = "com.example.storesync.extra_storage"
    static let basePlan = "monthly-autorenew"
    static let orderID = "GPA.3352-0306-9721-14048"
    static let renewalOrderID = "GPA.3352-0306-9721-14048..0"
    static let accountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    /// 2025-05-20T10:00:00Z: the purchase.
    static let started = Date(timeIntervalSince1970: 1_747_735_200)
    static let expires = started.addingTimeInterval(31 * 86_400)
    /// When the tests' answers were fetched: two days into the first period.
    static let fetchedAt = started.addingTimeInterval(2 * 86_400)

    /// An auto-renewing monthly subscription bought in Production, active, not yet acknowledged.
    static func subscription(_ changes: Changes = [:], lineItems: [[String: Any]]? = nil) -> Data {
        var body: [String: Any] = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "US", "startTime": time(started),
            "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "latestOrderId": orderID,
            "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING",
            "externalAccountIdentifiers": ["obfuscatedExternalAccountId": accountToken,
                                           "obfuscatedExternalProfileId": "profile-1"],
            "lineItems": lineItems ?? [lineItem()],
            "futureField": ["kept": true],
        ]
        apply(changes, to: &body)
        return json(body)
    }

    /// One line item of the monthly base plan, renewing, owned through `orderID`.
    static func lineItem(_ changes: Changes = [:]) -> [String: Any] {
        var item: [String: Any] = [
            "productId": monthly, "expiryTime": time(expires),
            "autoRenewingPlan": ["autoRenewEnabled": true,
                                 "recurringPrice": ["currencyCode": "USD", "units": "9", "nanos": 990_000_000]],
            "offerDetails": ["basePlanId": basePlan, "offerTags": ["default"]],
            "offerPhase": ["basePrice": [String: Any]()],
            "latestSuccessfulOrderId": orderID,
        ]
        apply(changes, to: &item)
        return item
    }

    /// The processed first order of `token`: 9.99 USD including 0.83 tax, for the first month.
    static func order(_ changes: Changes = [:], id: String = orderID, periodStart: Date = started) -> Data {
        var body: [String: Any] = [
            "orderId": id, "purchaseToken": token, "state": "PROCESSED", "createTime": time(periodStart),
            "lastEventTime": time(periodStart),
            "buyerAddress": ["buyerCountry": "US", "buyerState": "CA", "buyerPostcode": "94043"],
            "total": ["currencyCode": "USD", "units": "9", "nanos": 990_000_000],
            "tax": ["currencyCode": "USD", "units": "0", "nanos": 830_000_000],
            "developerRevenueInBuyerCurrency": ["currencyCode": "USD", "units": "7", "nanos": 790_000_000],
            "orderDetails": ["taxInclusive": true], "salesChannel": "IN_APP",
            "orderHistory": ["processedEvent": ["eventTime": time(periodStart)]],
            "lineItems": [[
                "productId": monthly, "productTitle": "StoreSync Monthly",
                "total": ["currencyCode": "USD", "units": "9", "nanos": 990_000_000],
                "tax": ["currencyCode": "USD", "units": "0", "nanos": 830_000_000],
                "listingPrice": ["currencyCode": "USD", "units": "9", "nanos": 990_000_000],
                "subscriptionDetails": ["basePlanId": basePlan, "servicePeriodStartTime": time(periodStart),
                                        "servicePeriodEndTime": time(periodStart.addingTimeInterval(31 * 86_400))],
            ]],
        ]
        apply(changes, to: &body)
        return json(body)
    }

    /// An RFC 3339 time with milliseconds, as Google writes them (formatted by Foundation, parsed by the code
    /// under test, so the two check each other).
    static func time(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    static func json(_ object: Any) -> Data {
        try! JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    /// Changes written as a JSON object, for parameterized tests (whose arguments must be `Sendable`).
    static func changes(_ json: String) -> Changes {
        let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        return object.mapValues { $0 }
    }

    private static func apply(_ changes: Changes, to body: inout [String: Any]) {
        for (key, value) in changes {
            if let value { body[key] = value } else { body.removeValue(forKey: key) }
        }
    }
}

/// A stand-in for Google on 127.0.0.1 with a kernel-chosen port: the OAuth token endpoint at `/token` and the
/// Play Developer API under `/androidpublisher/v3/applications/`, each recording what it receives.
struct PlayServer {
    static let apiPrefix = "/androidpublisher/v3/applications/"
    static let applicationPath = "\(apiPrefix)\(Play.packageName)"

    let server: HTTPServer
    let base: String
    var tokenURI: String { base + "/token" }
    let tokenRequests = Recorder()
    let apiRequests = Recorder()

    /// `token` answers the token endpoint (by default: a fresh access token `ya29.test-N` for an hour);
    /// `api` answers every API request.
    init(token: (@Sendable (HTTPRequest) async -> HTTPResponse)? = nil, api: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) throws {
        var router = HTTPRouter()
        let tokenRequests = self.tokenRequests
        let apiRequests = self.apiRequests
        let issued = Mutex(0)
        let answerToken = token ?? { _ in
            let number = issued.withLock { count in
                count += 1
                return count
            }
            return .json(200, #"{"access_token":"ya29.test-\#(number)","expires_in":3599,"token_type":"Bearer"}"#)
        }
        router.route("POST", "/token") { request in
            tokenRequests.record(request)
            return await answerToken(request)
        }
        for method in ["GET", "POST"] {
            router.route(method, prefix: Self.apiPrefix) { request in
                apiRequests.record(request)
                return await api(request)
            }
        }
        server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        base = "http://127.0.0.1:\(server.port)"
    }

    func stop() async { await server.stop(grace: .seconds(1)) }

    /// The fields of a token request's form body, percent-decoded.
    static func form(_ request: HTTPRequest) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}

/// The service-account key and client settings the tests use.
enum ServiceAccount {
    /// Limits no test reaches unless it means to.
    static let generous = GooglePlayRateLimits(subscriptions: .init(perMinute: 60_000, burst: 1000),
                                               orders: .init(perMinute: 60_000, burst: 1000),
                                               subscriptionUpdates: .init(perMinute: 60_000, burst: 1000),
                                               voidedPurchases: .init(perMinute: 60_000, burst: 1000))

    static func configuration(_ server: PlayServer, limits: GooglePlayRateLimits = generous) -> GooglePlayAPIConfiguration {
        var configuration = GooglePlayAPIConfiguration(packageName: Play.packageName, clientEmail: Play.clientEmail,
                                                       privateKey: TestKeys.a, privateKeyID: Play.keyID,
                                                       tokenURI: server.tokenURI, baseURL: server.base, rateLimits: limits)
        configuration.requestTimeout = .seconds(10)
        return configuration
    }

    static func client(_ server: PlayServer, http: HTTPClient, limits: GooglePlayRateLimits = generous,
                       clock: TestClock = TestClock(Play.fetchedAt),
                       observe: (@Sendable (GooglePlayAPICall) -> Void)? = nil) throws -> GooglePlayAPIClient {
        try GooglePlayAPIClient(configuration: configuration(server, limits: limits), httpClient: http, now: clock.closure,
                                observe: observe)
    }
}

/// The error `body` throws, which must be a `GooglePlayAPIError`.
func apiError(_ body: () async throws -> Void) async throws -> GooglePlayAPIError {
    do {
        try await body()
    } catch let error as GooglePlayAPIError {
        return error
    }
    throw ExpectedFailure()
}

struct ExpectedFailure: Error, CustomStringConvertible {
    var description: String { "expected a GooglePlayAPIError, the call succeeded" }
}


struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` every 5 ms for up to `limit`; throws when it never holds, so no test waits unboundedly.
func eventually(_ what: String, within limit: Duration = .seconds(10), _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { throw TimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(5))
    }
}
