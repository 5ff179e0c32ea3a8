import AppStore
import Crypto
import Foundation
import HTTP
import TestPKI
import TestSupport
import Testing

/// `storesync verify`: how on-call inspects a dead-lettered payload — same checks as the worker, decoded
/// output on success, Apple's error code and the failed check otherwise.
@Suite struct VerifyCLITests {
    static let pki = Result { try LocalApplePKI.generate() }
    static let googleKey = Result { try PrivateKey.generate(.rsa(bits: 2048)) }

    private func temporaryFile(_ contents: String) -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-verify-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        return path
    }

    private func notification() throws -> String {
        let payload = try JSONSerialization.data(withJSONObject: [
            "notificationType": "FUTURE_TYPE", "notificationUUID": "b7a7a0c2-1111-4222-8333-944445555666",
            "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
            "data": ["bundleId": "com.example.app", "environment": "Sandbox"],
        ] as [String: Any])
        return try Self.pki.get().sign(payload)
    }

    private func appleArguments(root: String) -> [String] {
        ["verify", "apple", "--root", root, "--bundle-id", "com.example.app", "--environment", "Sandbox"]
    }

    @Test func appleNotificationVerifiesFromAJWSOrAWebhookBody() async throws {
        let root = temporaryFile(try Self.pki.get().root.pem)
        let token = try notification()
        for input in [token, #"{"signedPayload":"\#(token)"}"#] {
            let result = try await ChildProcess.run("storesync", appleArguments(root: root), stdin: Data(input.utf8))
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains(#""notificationType":"FUTURE_TYPE""#))
        }
    }

    @Test func appleRejectionPrintsAppleCodeAndReason() async throws {
        let root = temporaryFile(try Self.pki.get().root.pem)
        let token = tamperingSignature(of: try notification())
        let result = try await ChildProcess.run("storesync", appleArguments(root: root), stdin: Data(token.utf8))
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("VERIFICATION_FAILURE: "))
        // Apple's own root does not trust the local PKI.
        let foreign = try await ChildProcess.run(
            "storesync", ["verify", "apple", "--bundle-id", "com.example.app", "--environment", "Sandbox"],
            stdin: Data(try notification().utf8))
        #expect(foreign.status == 1)
        #expect(foreign.stdout.contains("VERIFICATION_FAILURE: certificate chain"))
    }

    @Test func anOversizedRootFileIsRefusedWithoutReadingItWhole() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-verify-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 64 * 1024 + 1)))
        let result = try await ChildProcess.run("storesync", appleArguments(root: path), stdin: Data())
        #expect(result.status == 2)
        #expect(result.stderr.contains("root file \(path) is larger than 65536 bytes"), "stderr was: \(result.stderr)")
    }

    private func pushToken(audience: String) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let claims = try JSONSerialization.data(withJSONObject: [
            "iss": "https://accounts.google.com", "aud": audience, "email": "push@example.iam.gserviceaccount.com",
            "email_verified": true, "sub": "1", "iat": now, "exp": now + 3600,
        ] as [String: Any])
        return "Bearer " + (try CompactJWS.sign(payload: claims, algorithm: .rs256, key: Self.googleKey.get(), kid: "k1",
                                                typ: "JWT"))
    }

    private func jwks() throws -> String {
        let data = try JSONSerialization.data(withJSONObject: ["keys": [try Self.googleKey.get().publicKey.jwk(kid: "k1")]])
        return String(decoding: data, as: UTF8.self)
    }

    @Test func googlePushTokenVerifiesAgainstAJWKSFile() async throws {
        let file = temporaryFile(try jwks())
        let arguments = ["verify", "google-push", "--jwks", file, "--audience", "https://sync.example/webhook/google-play",
                         "--email", "push@example.iam.gserviceaccount.com"]
        let good = try await ChildProcess.run("storesync", arguments,
                                              stdin: Data(try pushToken(audience: "https://sync.example/webhook/google-play").utf8))
        #expect(good.status == 0, "\(good.stdout) \(good.stderr)")
        #expect(good.stdout.contains(#""email":"push@example.iam.gserviceaccount.com""#))
        let wrong = try await ChildProcess.run("storesync", arguments,
                                               stdin: Data(try pushToken(audience: "https://elsewhere.example").utf8))
        #expect(wrong.status == 1)
        #expect(wrong.stdout.hasPrefix("wrong audience: "))
    }

    @Test func googlePushTokenVerifiesAgainstAJWKSURL() async throws {
        let body = try jwks()
        var router = HTTPRouter()
        router.route("GET", "/certs") { _ in
            HTTPResponse(status: 200, headers: [("content-type", "application/json"), ("cache-control", "public, max-age=300")],
                         body: Data(body.utf8))
        }
        let server = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        let result = try await ChildProcess.run(
            "storesync", ["verify", "google-push", "--jwks", "http://127.0.0.1:\(server.port)/certs", "--audience", "aud",
                          "--email", "push@example.iam.gserviceaccount.com"],
            stdin: Data(try pushToken(audience: "aud").utf8))
        await server.stop(grace: .seconds(1))
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
    }
}
