import AppStore
import Crypto
import Foundation
import HTTP
import StoreModel
import Synchronization
import TestPKI
import TestSupport

/// Field changes to a payload: a value sets the field, nil removes it.
typealias Changes = [String: (any Sendable)?]

/// Apple-shaped payloads and answers for the API client and snapshot translator tests: field names exactly
/// as Apple documents them, dates in milliseconds since 1970.
enum Answers {
    static let lineage = "2000000000000001"
    static let monthly = "com.example.storesync.monthly"
    static let yearly = "com.example.storesync.yearly"
    static let accountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    static let purchased = utc(2025, 5, 20)
    static let expires = utc(2025, 6, 20)

    /// A paid first purchase of the monthly product in Production, signed at `Fixture.signedDate`. `changes`
    /// sets fields; a nil value removes one.
    static func transaction(_ changes: Changes = [:]) -> Data {
        payload([
            "transactionId": lineage, "originalTransactionId": lineage, "webOrderLineItemId": "2000000000000002",
            "bundleId": Fixture.bundleID, "productId": monthly, "subscriptionGroupIdentifier": "21000000",
            "purchaseDate": milliseconds(purchased), "originalPurchaseDate": milliseconds(purchased),
            "expiresDate": milliseconds(expires), "quantity": 1, "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": "PURCHASED", "environment": "Production", "transactionReason": "PURCHASE",
            "price": 9990, "currency": "USD", "storefront": "USA", "storefrontId": "143441",
            "appAccountToken": accountToken, "signedDate": milliseconds(Fixture.signedDate),
            "futureField": ["kept": true],
        ], changes)
    }

    /// Renewal info of `lineage`, auto-renew on, signed at `Fixture.signedDate`.
    static func renewal(_ changes: Changes = [:]) -> Data {
        payload([
            "originalTransactionId": lineage, "productId": monthly, "autoRenewProductId": monthly, "autoRenewStatus": 1,
            "isInBillingRetryPeriod": false, "renewalDate": milliseconds(expires), "renewalPrice": 9990,
            "currency": "USD", "environment": "Production", "signedDate": milliseconds(Fixture.signedDate),
        ], changes)
    }

    static func signed(_ payload: Data, by pki: Result<LocalApplePKI, any Error> = PKIs.valid) throws -> String {
        try pki.get().sign(payload)
    }

    /// One `lastTransactions` item.
    static func entry(status: Int = 1, original: String = lineage, transaction: String, renewal: String?) -> [String: Any] {
        var item: [String: Any] = ["status": status, "originalTransactionId": original, "signedTransactionInfo": transaction]
        item["signedRenewalInfo"] = renewal
        return item
    }

    /// A `StatusResponse` body with one group per element of `groups`.
    static func statusResponse(_ groups: [(group: String, entries: [[String: Any]])]) -> String {
        json(["environment": "Production", "bundleId": Fixture.bundleID, "appAppleId": Fixture.appAppleID,
              "data": groups.map { ["subscriptionGroupIdentifier": $0.group, "lastTransactions": $0.entries] }])
    }

    /// A `HistoryResponse` page.
    static func historyPage(_ signedTransactions: [String], revision: String, hasMore: Bool) -> String {
        json(["revision": revision, "hasMore": hasMore, "bundleId": Fixture.bundleID, "appAppleId": Fixture.appAppleID,
              "environment": "Production", "signedTransactions": signedTransactions])
    }

    static func json(_ object: Any) -> String {
        String(decoding: Payloads.json(object), as: UTF8.self)
    }

    private static func payload(_ defaults: [String: Any], _ changes: Changes) -> Data {
        var body = defaults
        for (key, value) in changes {
            if let value { body[key] = value } else { body.removeValue(forKey: key) }
        }
        return Payloads.json(body)
    }
}

/// The in-app purchase key and ids the test connections use.
enum APIKey {
    static let key: Result<PrivateKey, any Error> = Result { try PrivateKey.generate(.ecP256) }
    static let keyID = "2X9R4HXF34"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"

    /// Limits no test reaches unless it means to.
    static let generous = AppStoreRateLimits(subscriptionStatuses: .init(perSecond: 1000), transactionHistory: .init(perSecond: 1000),
                                             consumption: .init(perSecond: 1000))

    /// A Production client of `base` trusting the valid local PKI.
    static func client(base: String, http: HTTPClient, limits: AppStoreRateLimits = generous, maxHistoryPages: Int = 50,
                       now: @escaping @Sendable () -> Date = { Fixture.now }) throws -> AppStoreAPIClient {
        var configuration = AppStoreAPIConfiguration(environment: .production, bundleID: Fixture.bundleID, keyID: keyID,
                                                     issuerID: issuerID, privateKey: try key.get(), baseURL: base,
                                                     rateLimits: limits)
        configuration.maxHistoryPages = maxHistoryPages
        configuration.requestTimeout = .seconds(10)
        return try AppStoreAPIClient(configuration: configuration, verifier: try Verifiers.production(), httpClient: http,
                                     now: now)
    }
}

/// A stand-in for Apple's API on 127.0.0.1 with a kernel-chosen port: each route records its requests.
struct AppleServer {
    let server: HTTPServer
    let base: String
    let recorder = Recorder()

    init(_ routes: [(method: String, path: String, answer: @Sendable (HTTPRequest) -> HTTPResponse)]) throws {
        var router = HTTPRouter()
        let recorder = self.recorder
        for route in routes {
            let answer = route.answer
            router.route(route.method, route.path) { request in
                recorder.record(request)
                return answer(request)
            }
        }
        server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        base = "http://127.0.0.1:\(server.port)"
    }

    func stop() async { await server.stop(grace: .seconds(1)) }
}

/// A clock tests move by hand.
final class ManualNow: Sendable {
    private let milliseconds: Atomic<Int64>

    init(_ start: Date) { milliseconds = Atomic(Int64((start.timeIntervalSince1970 * 1000).rounded())) }

    func advance(by duration: Duration) {
        milliseconds.add(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000,
                         ordering: .relaxed)
    }

    var now: Date { Date(timeIntervalSince1970: Double(milliseconds.load(ordering: .relaxed)) / 1000) }
}
