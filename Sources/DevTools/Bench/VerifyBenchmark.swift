import AppStore
import CLI
import Crypto
import Foundation
import GooglePlay
import TestPKI

/// `storesync-dev bench verify`: signature-verification throughput on one core.
enum VerifyBenchmark {
    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let seconds = try Parse.duration(try arguments.option("--seconds") ?? "3", "--seconds",
                                         range: .milliseconds(100)...(.seconds(600)))
        try arguments.finish()

        let pki = try LocalApplePKI.generate()
        let notification = try signedNotification(pki)
        let warm = try SignedDataVerifier(roots: [pki.root], bundleID: "com.example.bench", appAppleID: nil,
                                          environment: .sandbox)
        let cold = try SignedDataVerifier(roots: [pki.root], bundleID: "com.example.bench", appAppleID: nil,
                                          environment: .sandbox, chainCacheSize: 0)
        _ = try warm.verifyNotification(notification)
        let warmRate = try await rate(for: seconds) { _ = try warm.verifyNotification(notification) }
        let coldRate = try await rate(for: seconds) { _ = try cold.verifyNotification(notification) }
        let googleRate = try await pushTokenRate(for: seconds)

        let fields: [(String, Output.Value)] = [
            ("benchmark", .string("verify")),
            ("apple_notifications_per_sec_warm_cache", .double(warmRate.wall.rounded())),
            ("apple_notifications_per_sec_no_cache", .double(coldRate.wall.rounded())),
            ("google_push_tokens_per_sec", .double(googleRate.wall.rounded())),
            // Per second of user CPU time, as `openssl speed` counts: comparable on a busy machine.
            ("apple_notifications_per_cpu_sec_warm_cache", .double(warmRate.cpu.rounded())),
            ("apple_notifications_per_cpu_sec_no_cache", .double(coldRate.cpu.rounded())),
            ("google_push_tokens_per_cpu_sec", .double(googleRate.cpu.rounded())),
            ("signed_payload_bytes", .int(notification.utf8.count)),
            ("seconds_each", .double(seconds.seconds)),
        ]
        Output.print(Output.Value.object(fields).text)
        return 0
    }

    /// A notification shaped like the App Store's: a signed payload carrying a signed transaction and
    /// signed renewal info, each with its own x5c chain; also what `bench ingest` posts.
    static func signedNotification(_ pki: LocalApplePKI) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func json(_ object: [String: Any]) throws -> Data {
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        }
        let transaction = try pki.sign(json([
            "transactionId": "2000000123456789", "originalTransactionId": "2000000100000000", "bundleId": "com.example.bench",
            "productId": "com.example.monthly", "purchaseDate": now, "expiresDate": now + 2_592_000_000,
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "signedDate": now,
            "environment": "Sandbox", "price": 9990, "currency": "USD", "transactionReason": "RENEWAL",
        ]))
        let renewal = try pki.sign(json([
            "originalTransactionId": "2000000100000000", "productId": "com.example.monthly", "autoRenewStatus": 1,
            "signedDate": now, "environment": "Sandbox", "renewalDate": now + 2_592_000_000,
        ]))
        return try pki.sign(json([
            "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString, "version": "2.0", "signedDate": now,
            "data": [
                "environment": "Sandbox", "bundleId": "com.example.bench", "appAppleId": 1_234_567_890, "status": 1,
                "signedTransactionInfo": transaction, "signedRenewalInfo": renewal,
            ] as [String: Any],
        ]))
    }

    /// Pub/Sub push tokens verified per second with Google's keys cached (RS256-2048, as Google signs them).
    private static func pushTokenRate(for duration: Duration) async throws -> Rate {
        let key = try PrivateKey.generate(.rsa(bits: 2048))
        let jwks = try JSONSerialization.data(withJSONObject: ["keys": [try key.publicKey.jwk(kid: "bench")]])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-bench-jwks-\(getpid()).json")
        try jwks.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let now = Int64(Date().timeIntervalSince1970)
        let claims = try JSONSerialization.data(withJSONObject: [
            "iss": "https://accounts.google.com", "aud": "https://sync.example.com/webhook/google-play",
            "email": "pubsub-push@example.iam.gserviceaccount.com", "email_verified": true, "sub": "1234567890",
            "iat": now, "exp": now + 3600,
        ])
        let authorization = "Bearer " + (try CompactJWS.sign(payload: claims, algorithm: .rs256, key: key, kid: "bench",
                                                             typ: "JWT"))
        let verifier = PushTokenVerifier(audience: "https://sync.example.com/webhook/google-play",
                                         serviceAccountEmail: "pubsub-push@example.iam.gserviceaccount.com",
                                         keys: GoogleKeyCache(fetcher: FileJWKSFetcher(path: file.path)))
        _ = try await verifier.verify(authorization: authorization)
        return try await rate(for: duration) { _ = try await verifier.verify(authorization: authorization) }
    }

    /// Operations per second of wall time and per second of this process's user CPU time.
    struct Rate {
        let wall: Double
        let cpu: Double
    }

    /// `body` run back to back for `duration`. The CPU rate is what `openssl speed` reports (it divides by
    /// user time), so the two compare fairly even when other processes share the cores.
    private static func rate(for duration: Duration, _ body: () async throws -> Void) async throws -> Rate {
        let clock = ContinuousClock()
        let start = clock.now
        let cpuStart = CPUTime.now().user
        var count = 0
        while clock.now - start < duration {
            for _ in 0..<50 { try await body() }
            count += 50
        }
        let wall = (clock.now - start).seconds
        let cpu = (CPUTime.now().user - cpuStart).seconds
        return Rate(wall: Double(count) / wall, cpu: Double(count) / max(cpu, 1e-9))
    }
}
