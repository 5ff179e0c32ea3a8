import Accounts
import AppStore
import Crypto
import Foundation
import HTTP
import Mirror
import Postgres
import TestPKI

/// Genuine store webhooks for the ingest tests, as the stores sign them: App Store notifications signed by a
/// PKI generated here (the Apple connection trusts its root), and Pub/Sub pushes whose OIDC token is signed
/// by a key the Google connection's JWKS URL serves.
enum SignedWebhooks {
    static let bundleID = "com.example.ingest"
    static let packageName = "com.example.ingest"
    static let pushEmail = "pubsub-push@example.iam.gserviceaccount.com"
    static let pki: LocalApplePKI = try! LocalApplePKI.generate()
    static let foreignPKI: LocalApplePKI = try! LocalApplePKI.generate()
    static let pushKey: PrivateKey = try! PrivateKey.generate(.rsa(bits: 2048))
    static let foreignPushKey: PrivateKey = try! PrivateKey.generate(.rsa(bits: 2048))

    static func audience(host: String) -> String { "https://\(host)/webhook/google-play" }

    /// A Sandbox App Store notification's JSON payload for the connection's bundle.
    static func notificationPayload(uuid: String = UUID().uuidString, bundleID: String = bundleID) -> Data {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return try! JSONSerialization.data(withJSONObject: [
            "notificationType": "TEST", "notificationUUID": uuid, "version": "2.0", "signedDate": now,
            "data": ["environment": "Sandbox", "bundleId": bundleID, "appAppleId": 1_234_567_890] as [String: Any],
        ], options: [.sortedKeys])
    }

    /// `{"signedPayload": jws}`.
    static func appleBody(_ jws: String) -> Data { Data(#"{"signedPayload":"\#(jws)"}"#.utf8) }

    /// A genuine App Store notification body.
    static func appleBody(uuid: String = UUID().uuidString) -> Data {
        appleBody(try! pki.sign(notificationPayload(uuid: uuid)))
    }

    /// A Pub/Sub push body carrying a test notification for `package`.
    static func googleBody(messageID: String = "42", package: String = packageName) -> Data {
        let notification = #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"1764590400000","testNotification":{"version":"1.0"}}"#
        return Data(#"{"message":{"data":"\#(Data(notification.utf8).base64EncodedString())","messageId":"\#(messageID)","publishTime":"2026-11-29T14:00:00Z"},"subscription":"projects/p/subscriptions/s"}"#.utf8)
    }

    /// `Bearer <token>` as Pub/Sub signs it, with `change` applied to the claims.
    static func authorization(host: String, key: PrivateKey = pushKey, kid: String = "ingest-key",
                              change: (inout [String: Any]) -> Void = { _ in }) -> String {
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = ["iss": "https://accounts.google.com", "aud": audience(host: host), "email": pushEmail,
                                     "email_verified": true, "sub": "1234567890", "iat": now - 10, "exp": now + 3590]
        change(&claims)
        let payload = try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return "Bearer " + (try! CompactJWS.sign(payload: payload, algorithm: .rs256, key: key, kid: kid, typ: "JWT"))
    }

    /// A JWKS server for the push key, on a loopback port.
    static func startKeyServer() throws -> HTTPServer {
        let jwks = try JSONSerialization.data(withJSONObject: ["keys": [try pushKey.publicKey.jwk(kid: "ingest-key")]])
        var router = HTTPRouter()
        router.route("GET", "/certs") { _ in
            HTTPResponse(status: 200, headers: [("content-type", "application/json"), ("cache-control", "max-age=3600")],
                         body: jwks)
        }
        return try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
    }

    /// An account for `host` with an Apple Sandbox connection trusting `pki`'s root and a Google connection
    /// whose pushes are checked against the key server at `jwksURL`; the account's id.
    @discardableResult
    static func addAccount(host: String, jwksURL: String, pool: PostgresPool) async throws -> Int64 {
        let roots = pki.root.pem
        return try await pool.transaction { db in
            let accountID = try Catalog.addAccount(host: host, name: "Test", on: db)
            var apple = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: bundleID,
                                              environment: .sandbox)
            apple.trustedRootsPEM = roots
            _ = try Catalog.addConnection(apple, on: db)
            var google = Catalog.NewConnection(accountID: accountID, store: .google, appIdentifier: packageName,
                                               environment: .production)
            google.pushAudience = audience(host: host)
            google.pushServiceAccount = pushEmail
            google.pushJWKSURL = jwksURL
            _ = try Catalog.addConnection(google, on: db)
            return accountID
        }
    }
}
