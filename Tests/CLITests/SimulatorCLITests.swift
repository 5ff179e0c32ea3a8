import AppStore
import Crypto
import Foundation
import HTTP
import TestSupport
import Testing

/// `storesync-dev simulator`: a local App Store in its own process, configured from the command line and driven
/// by `storesync-dev simulator scenario` from another — how the README demo and app teams use it.
@Suite struct SimulatorCLITests {
    /// Notification bodies an ingest stand-in received, with their Host headers.
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [(host: String?, body: Data)] = []
        func append(_ host: String?, _ body: Data) { lock.withLock { items.append((host, body)) } }
        var all: [(host: String?, body: Data)] { lock.withLock { items } }
    }

    private func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("storesync-simulator-\(UUID().uuidString)-\(name)").path
    }

    @Test func aRunningSimulatorIsDrivenFromAnotherProcessAndItsAnswersVerify() async throws {
        let received = Received()
        var router = HTTPRouter()
        router.route("POST", "/webhook/apple") { request in
            received.append(request.header("host"), request.body)
            return HTTPResponse(status: 200)
        }
        let ingest = try HTTPServer(configuration: HTTPServerConfiguration(), router: router)
        let (keyFile, rootFile) = (temporaryPath("key.p8"), temporaryPath("root.pem"))
        defer { for path in [keyFile, rootFile] { try? FileManager.default.removeItem(atPath: path) } }
        let simulator = try ChildProcess("storesync-dev", [
            "simulator", "--bundle-id", "com.example.app", "--key-out", keyFile, "--root-out", rootFile,
            "--key-id", "KEY1", "--issuer-id", "issuer-1", "--notify", "http://127.0.0.1:\(ingest.port)/webhook/apple",
            "--notify-host", "billing.example.com",
        ])
        try await eventually("the simulator to print its settings; stderr: \(simulator.stderr)", timeout: .seconds(20)) {
            simulator.stdout.contains("\n")
        }
        let settings = try #require(try JSONSerialization.jsonObject(with: Data(simulator.stdout.utf8)) as? [String: Any])
        let url = try #require(settings["url"] as? String)
        #expect(settings["environment"] as? String == "Sandbox" && settings["keyId"] as? String == "KEY1")

        let subscribed = try await ChildProcess.run("storesync-dev", [
            "simulator", "scenario", "subscribe", "--url", url, "--product-id", "com.example.monthly", "--price", "9990",
            "--currency", "USD",
        ])
        #expect(subscribed.status == 0, "\(subscribed.stdout) \(subscribed.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(subscribed.stdout.utf8)) as? [String: Any])
        let id = try #require(result["originalTransactionId"] as? String)

        // The notification reached the ingest under the account's host and verifies against the written root.
        let rootPEM = try #require(FileManager.default.contents(atPath: rootFile))
        let roots = try Certificate.load(rootPEM)
        let verifier = try SignedDataVerifier(roots: roots, bundleID: "com.example.app", appAppleID: nil, environment: .sandbox)
        let notifications = received.all
        #expect(notifications.count == 1 && notifications.first?.host == "billing.example.com")
        let bodyData = try #require(notifications.first?.body)
        let body = try #require(try JSONSerialization.jsonObject(with: bodyData) as? [String: String])
        #expect(try verifier.verifyNotification(try #require(body["signedPayload"])).notificationType == "SUBSCRIBED")

        // The written .p8 signs server-API requests the simulator accepts.
        let pem = try #require(FileManager.default.contents(atPath: keyFile))
        let key = try PrivateKey(pem: String(decoding: pem, as: UTF8.self))
        let token = try AppStoreAPIToken(keyID: "KEY1", issuerID: "issuer-1", bundleID: "com.example.app", privateKey: key).make()
        let client = try HTTPClient()
        let status = try await client.send(HTTPClientRequest(url: "\(url)/inApps/v1/subscriptions/\(id)",
                                                             headers: [("Authorization", "Bearer \(token)")], timeout: .seconds(10)))
        await client.shutdown()
        #expect(status.status == 200)

        let refused = try await ChildProcess.run("storesync-dev", ["simulator", "scenario", "recover", "--url", url, "--id", id])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("\"error\""))

        simulator.signal(SIGTERM)
        #expect(try await simulator.wait(timeout: .seconds(20)) == 0)
        await ingest.stop(grace: .seconds(1))
    }

    @Test func anOversizedPublicKeyFileIsRefusedWithoutReadingItWhole() async throws {
        let path = temporaryPath("big.pem")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 64 * 1024 + 1)))
        let result = try await ChildProcess.run("storesync-dev", ["simulator", "--api-public-key", path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--api-public-key file \(path) is larger than 65536 bytes"), "stderr was: \(result.stderr)")
    }

    @Test("bad simulator arguments exit 2 with the reason", arguments: [
        (["simulator"], "--key-out FILE"),
        (["simulator", "--key-out", "/nonexistent/key.p8", "--environment", "Production"], "--app-apple-id is required"),
        (["simulator", "--key-out", "/nonexistent/key.p8", "--environment", "Xcode"], "Production or Sandbox"),
        (["simulator", "--notify-host", "h", "--key-out", "/nonexistent/key.p8"], "--notify-host needs --notify"),
        (["simulator", "scenario", "renew"], "--url"),
        (["simulator", "scenario", "teleport", "--url", "http://127.0.0.1:1"], "unknown scenario action"),
    ])
    func badArguments(_ arguments: [String], _ message: String) async throws {
        let result = try await ChildProcess.run("storesync-dev", arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }
}
