import Crypto
import Foundation
import GooglePlay
import HTTP
import TestSupport
import Testing

/// `storesync-dev simulator --google-package …`: a local Google Play in its own process — next to the App Store
/// one — configured from the command line and driven by `storesync-dev simulator google` from another.
@Suite struct GoogleSimulatorCLITests {
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [(host: String?, authorization: String?, body: Data)] = []
        func append(_ host: String?, _ authorization: String?, _ body: Data) { lock.withLock { items.append((host, authorization, body)) } }
        var all: [(host: String?, authorization: String?, body: Data)] { lock.withLock { items } }
    }

    private func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("storesync-google-simulator-\(UUID().uuidString)-\(name)").path
    }

    @Test func bothStoresRunInOneProcessAndThePlaySimulatorIsDrivenFromAnother() async throws {
        let received = Received()
        var router = HTTPRouter()
        router.route("POST", "/webhook/google-play") { request in
            received.append(request.header("host"), request.header("authorization"), request.body)
            return HTTPResponse(status: 204)
        }
        let ingest = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        let (appleKey, googleKey) = (temporaryPath("key.p8"), temporaryPath("service-account.json"))
        defer { for path in [appleKey, googleKey] { try? FileManager.default.removeItem(atPath: path) } }
        let simulator = try ChildProcess("storesync-dev", [
            "simulator", "--key-out", appleKey, "--google-package", "com.example.app",
            "--google-service-account-key-out", googleKey, "--google-push-url", "http://127.0.0.1:\(ingest.port)/webhook/google-play",
            "--google-push-host", "billing.example.com", "--google-push-audience", "https://billing.example.com/webhook/google-play",
        ])
        try await eventually("the simulator to print its settings; stderr: \(simulator.stderr)", timeout: .seconds(20)) {
            simulator.stdout.contains("\n")
        }
        let settings = try #require(try JSONSerialization.jsonObject(with: Data(simulator.stdout.utf8)) as? [String: Any])
        #expect(settings["url"] is String && settings["environment"] as? String == "Sandbox")
        let google = try #require(settings["google"] as? [String: Any])
        let url = try #require(google["url"] as? String)
        #expect(url != settings["url"] as? String)
        #expect(google["packages"] as? [String] == ["com.example.app"])

        // The written key file buys an access token at its token_uri.
        let keyData = try #require(FileManager.default.contents(atPath: googleKey))
        let keyFile = try #require(try JSONSerialization.jsonObject(with: keyData) as? [String: Any])
        let tokenURI = try #require(keyFile["token_uri"] as? String)
        #expect(tokenURI == google["tokenUri"] as? String)
        let privateKey = try PrivateKey(pem: try #require(keyFile["private_key"] as? String))
        let assertion = try ServiceAccountAssertion.make(clientEmail: try #require(keyFile["client_email"] as? String),
                                                         privateKey: privateKey, tokenURI: tokenURI)
        let client = try HTTPClient()
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let token = try await client.send(HTTPClientRequest(method: "POST", url: tokenURI,
                                                            headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                            body: Data(form.utf8), timeout: .seconds(10)))
        #expect(token.status == 200)

        let purchased = try await ChildProcess.run("storesync-dev", [
            "simulator", "google", "purchase", "--url", url, "--product-id", "premium_monthly", "--base-plan", "monthly",
            "--price", "999", "--currency", "USD", "--account-id", "acct-1",
        ])
        #expect(purchased.status == 0, "\(purchased.stdout) \(purchased.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(purchased.stdout.utf8)) as? [String: Any])
        let purchaseToken = try #require(result["purchaseToken"] as? String)

        // The push reached the ingest under the account's host, and its token verifies against the simulator's keys.
        let push = try #require(received.all.first)
        #expect(received.all.count == 1 && push.host == "billing.example.com")
        let fetcher = CLITestJWKSFetcher(url: try #require(google["certificatesUrl"] as? String), client: client)
        let verifier = PushTokenVerifier(audience: "https://billing.example.com/webhook/google-play",
                                         serviceAccountEmail: "pubsub-push@storesync-simulator.iam.gserviceaccount.com",
                                         keys: GoogleKeyCache(fetcher: fetcher))
        _ = try await verifier.verify(authorization: try #require(push.authorization))

        let state = try await ChildProcess.run("storesync-dev", ["simulator", "google", "state", "--url", url, "--token", purchaseToken])
        #expect(state.status == 0 && state.stdout.contains("SUBSCRIPTION_STATE_ACTIVE"))
        let refused = try await ChildProcess.run("storesync-dev", ["simulator", "google", "resume", "--url", url, "--token", purchaseToken])
        #expect(refused.status == 1 && refused.stdout.contains("\"error\""))
        await client.shutdown()

        simulator.signal(SIGTERM)
        #expect(try await simulator.wait(timeout: .seconds(20)) == 0)
        await ingest.stop(grace: .seconds(1))
    }

    @Test func anOversizedServiceAccountKeyFileIsRefusedWithoutReadingItWhole() async throws {
        let path = temporaryPath("big.json")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 64 * 1024 + 1)))
        let result = try await ChildProcess.run("storesync-dev", ["simulator", "--google-package", "com.example.app",
                                                              "--google-service-account-key", path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--google-service-account-key file \(path) is larger than 65536 bytes"),
                "stderr was: \(result.stderr)")
    }

    @Test("bad Google simulator arguments exit 2 with the reason", arguments: [
        (["simulator", "--google-package", "com.example.app"], "--google-service-account-key-out FILE"),
        (["simulator", "--google-push-url", "http://127.0.0.1:1/"], "--google-push-url needs --google-package"),
        (["simulator", "--google-package", "com.example.app", "--google-service-account-key-out", "/nonexistent/k.json",
          "--google-push-host", "h"], "--google-push-host needs --google-push-url"),
        (["simulator", "--google-package", "com.example.app", "--google-service-account-key", "/nonexistent/k.json"],
         "cannot read --google-service-account-key file /nonexistent/k.json"),
        (["simulator", "--google-package", "com.example.app", "--google-service-account-key-out", "/tmp/k.json", "--notify",
          "http://127.0.0.1:1/"], "--notify is an App Store option"),
        (["simulator", "--google-package", "not a package", "--google-service-account-key-out", "/nonexistent/k.json"],
         "package name"),
        (["simulator", "google", "renew"], "--url"),
        (["simulator", "google", "teleport", "--url", "http://127.0.0.1:1"], "unknown Google scenario action"),
        (["simulator", "google", "state", "--url", "http://127.0.0.1:1"], "needs --token"),
    ])
    func badArguments(_ arguments: [String], _ message: String) async throws {
        let result = try await ChildProcess.run("storesync-dev", arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }
}

/// Fetches a key set over HTTP for the verifier, as StoreSync's CLI fetcher does.
private struct CLITestJWKSFetcher: JWKSFetcher {
    let url: String
    let client: HTTPClient

    func fetchKeySet() async throws -> JWKSDocument {
        let response = try await client.send(HTTPClientRequest(url: url, timeout: .seconds(10)))
        guard response.status == 200 else { throw HTTPClientError(.other, "JWKS answered \(response.status)") }
        return JWKSDocument(json: response.body)
    }
}
