import AppStore
import Crypto
import Foundation
import HTTP
import Testing
import TestSupport

/// Ingest verifies every webhook at receipt: a forgery, or a notification for nothing the host's account
/// connects, is refused with the failed check's code, counted, and never stored — so the queue and the dead-letter table
/// hold only what the stores really sent.
@Suite struct ReceiptVerificationTests {
    /// A webhook that must be refused: where it goes, what it carries, and the answer and counter it must get.
    struct Forgery: Sendable, CustomTestStringConvertible {
        let name: String
        let path: String
        let body: @Sendable () throws -> Data
        let authorization: String?
        let status: Int
        let code: String

        var testDescription: String { name }
    }

    static let host = IngestServiceTests.host
    static let apple = "/webhook/apple"
    static let google = "/webhook/google-play"

    /// A notification signed by the connection's PKI under a header of its own choosing.
    static func signed(header: [String: Any], payload: Data = SignedWebhooks.notificationPayload(),
                       key: PrivateKey = SignedWebhooks.pki.leafKey) throws -> String {
        let chain = [SignedWebhooks.pki.leaf, SignedWebhooks.pki.intermediate, SignedWebhooks.pki.root]
            .map { $0.der.base64EncodedString() }
        var fields = header
        if fields["x5c"] == nil { fields["x5c"] = chain }
        let input = Base64URL.encode(try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) + "."
            + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try SignatureAlgorithm.es256.sign(Data(input.utf8), with: key))
    }

    static let forgeries: [Forgery] = [
        Forgery(name: "Apple: signature tampered", path: apple, body: {
            SignedWebhooks.appleBody(tamperingSignature(of: try SignedWebhooks.pki.sign(SignedWebhooks.notificationPayload())))
        }, authorization: nil, status: 401, code: "VERIFICATION_FAILURE"),
        Forgery(name: "Apple: alg none", path: apple, body: {
            let parts = try SignedWebhooks.pki.sign(SignedWebhooks.notificationPayload()).split(separator: ".")
            return SignedWebhooks.appleBody(Base64URL.encode(Data(#"{"alg":"none"}"#.utf8)) + ".\(parts[1]).\(parts[2])")
        }, authorization: nil, status: 400, code: "INVALID_JWT_FORMAT"),
        Forgery(name: "Apple: chain to a root the connection does not trust", path: apple, body: {
            SignedWebhooks.appleBody(try SignedWebhooks.foreignPKI.sign(SignedWebhooks.notificationPayload()))
        }, authorization: nil, status: 401, code: "VERIFICATION_FAILURE"),
        Forgery(name: "Apple: crit names an extension StoreSync does not understand", path: apple, body: {
            SignedWebhooks.appleBody(try signed(header: ["alg": "ES256", "crit": ["exp"], "exp": 1]))
        }, authorization: nil, status: 401, code: "VERIFICATION_FAILURE"),
        Forgery(name: "Apple: b64 false", path: apple, body: {
            SignedWebhooks.appleBody(try signed(header: ["alg": "ES256", "b64": false]))
        }, authorization: nil, status: 401, code: "VERIFICATION_FAILURE"),
        Forgery(name: "Apple: a bundle this host connects no store for", path: apple, body: {
            SignedWebhooks.appleBody(try SignedWebhooks.pki.sign(SignedWebhooks.notificationPayload(bundleID: "com.example.other")))
        }, authorization: nil, status: 404, code: "no connection"),
        Forgery(name: "Apple: not a JWS of a notification", path: apple, body: {
            SignedWebhooks.appleBody("e30.e30.c2ln")
        }, authorization: nil, status: 400, code: "INVALID_JWT_FORMAT"),
        Forgery(name: "Google: no Authorization", path: google, body: { SignedWebhooks.googleBody() },
                authorization: nil, status: 401, code: "missing token"),
        Forgery(name: "Google: token signed by another key", path: google, body: { SignedWebhooks.googleBody() },
                authorization: SignedWebhooks.authorization(host: host, key: SignedWebhooks.foreignPushKey), status: 401,
                code: "bad signature"),
        Forgery(name: "Google: token for another endpoint", path: google, body: { SignedWebhooks.googleBody() },
                authorization: SignedWebhooks.authorization(host: host) { $0["aud"] = "https://elsewhere.example/push" },
                status: 401, code: "wrong audience"),
        Forgery(name: "Google: token of another service account", path: google, body: { SignedWebhooks.googleBody() },
                authorization: SignedWebhooks.authorization(host: host) { $0["email"] = "mallory@example.com" },
                status: 401, code: "wrong email"),
        Forgery(name: "Google: expired token", path: google, body: { SignedWebhooks.googleBody() },
                authorization: SignedWebhooks.authorization(host: host) { $0["exp"] = Int(Date().timeIntervalSince1970) - 600 },
                status: 401, code: "expired"),
        Forgery(name: "Google: not a JWS", path: google, body: { SignedWebhooks.googleBody() },
                authorization: "Bearer not-a-token", status: 400, code: "malformed"),
        Forgery(name: "Google: a package this host connects no store for", path: google,
                body: { SignedWebhooks.googleBody(package: "com.example.other") },
                authorization: SignedWebhooks.authorization(host: host), status: 404, code: "no connection"),
    ]

    @Test("a forgery is refused with the failed check's code, counted, and nothing is stored", arguments: forgeries)
    func forgeryRefused(_ forgery: Forgery) async throws {
        try await IngestServiceTests().withService { (service: IngestServiceTests.Service) async throws in
            let headers = forgery.authorization.map { [("Authorization", $0)] } ?? []
            let response = try await service.post(forgery.path, try forgery.body(), headers: headers)
            #expect(response.status == forgery.status)
            // The check that failed, and nothing of the connection's settings (its audience, push account, ids).
            let object = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
            #expect(object == ["error": "notification not accepted: \(forgery.code)"], "\(object ?? [:])")
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(!text.contains(SignedWebhooks.audience(host: Self.host)) && !text.contains(SignedWebhooks.pushEmail))
            #expect(try await service.jobCount() == 0)
            let metrics = String(decoding: try await service.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"storesync_webhook_refused_total{route="\#(forgery.path)",reason="\#(forgery.code)"} 1"#),
                    "\(metrics.split(separator: "\n").filter { $0.contains("refused") })")
        }
    }

    @Test("the genuine webhook next to each forgery is stored")
    func genuineStored() async throws {
        try await IngestServiceTests().withService { (service: IngestServiceTests.Service) async throws in
            #expect(try await service.post(Self.apple, SignedWebhooks.appleBody()).status == 200)
            #expect(try await service.post(Self.google, SignedWebhooks.googleBody(),
                                           headers: [("Authorization", SignedWebhooks.authorization(host: Self.host))]).status == 200)
            #expect(try await service.jobCount() == 2)
        }
    }

    @Test("a push that cannot be checked because Google's keys cannot be fetched is answered 503 and not stored")
    func keysUnavailableIs503() async throws {
        try await IngestServiceTests().withService { (service: IngestServiceTests.Service) async throws in
            try await service.database.pool.query("UPDATE store_connections SET push_jwks_url = 'http://127.0.0.1:1/certs'")
            try await eventually("the changed connection to be used (its trust is re-read within seconds)", timeout: .seconds(20),
                                 every: .milliseconds(250)) {
                try await service.post(Self.google, SignedWebhooks.googleBody(),
                                       headers: [("Authorization", SignedWebhooks.authorization(host: Self.host))]).status == 503
            }
            #expect(try await service.jobCount() == 0)
        }
    }

    @Test("a connection added while serving is trusted within seconds")
    func newConnectionSeen() async throws {
        try await IngestServiceTests().withService { (service: IngestServiceTests.Service) async throws in
            #expect(try await service.post(Self.apple, SignedWebhooks.appleBody(), host: "later.test").status == 404)
            try await SignedWebhooks.addAccount(host: "later.test", jwksURL: "http://127.0.0.1:1/certs", pool: service.database.pool)
            try await eventually("the new account's connection to be trusted", timeout: .seconds(20), every: .milliseconds(250)) {
                try await service.post(Self.apple, SignedWebhooks.appleBody(), host: "later.test").status == 200
            }
        }
    }
}
