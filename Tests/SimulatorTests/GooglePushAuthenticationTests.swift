import Crypto
import Foundation
import GooglePlay
import HTTP
import Simulator
import Testing

/// Pushes carry OIDC tokens that StoreSync's `PushTokenVerifier` accepts with the simulator's key set, and
/// each injected bad token fails the check it is meant to fail.
@Suite struct GooglePushAuthenticationTests {
    @Test func pushTokensVerifyAgainstTheSimulatorsKeySet() async throws {
        let harness = try GoogleHarness()
        try await harness.purchase(silent: false)
        let received = try #require(harness.ingest.received.current.first)
        let authorization = try #require(received.authorization)
        let claims = try await harness.verifier().verify(authorization: authorization)
        #expect(claims.issuer == "https://accounts.google.com")
        #expect(claims.audience == GoogleFixture.audience && claims.email == GoogleFixture.pushEmail)
        #expect(claims.expiresAt.timeIntervalSince(claims.issuedAt) == 3600)
        #expect(abs(claims.issuedAt.timeIntervalSinceNow) < 120)
        #expect(claims.subject == "113774264463038321964")

        let jws = try CompactJWS(String(authorization.dropFirst("Bearer ".count)))
        #expect(jws.header.alg == "RS256" && jws.header.typ == "JWT")
        #expect(jws.header.kid == harness.simulator.pushKeyIDs.last)
        #expect(harness.simulator.pushKeyIDs.count == 1 && harness.simulator.pushKeyIDs[0].count == 40)
        await harness.close()
    }

    @Test func theKeySetIsPublishedWithCacheControl() async throws {
        let harness = try GoogleHarness(push: false) { $0.jwksMaxAge = .seconds(1234) }
        let response = try await harness.client.send(HTTPClientRequest(url: harness.simulator.certificatesURL, timeout: .seconds(10)))
        #expect(response.status == 200)
        #expect(response.header("cache-control").flatMap(JWKSDocument.maxAge(fromCacheControl:)) == .seconds(1234))
        let set = try JSONWebKeySet(json: response.body)
        #expect(Array(set.keys.keys) == harness.simulator.pushKeyIDs)
        let keys = try #require(try jsonObject(response)["keys"] as? [[String: String]])
        #expect(keys.allSatisfy { $0["kty"] == "RSA" && $0["alg"] == "RS256" && $0["use"] == "sig" })
        #expect(harness.simulator.requestCount(.certificates) == 1)
        await harness.close()
    }

    @Test("a bad push token fails verification with its own code", arguments: [
        (PushTokenFault.wrongAudience, PushTokenError.Code.wrongAudience),
        (.wrongEmail, .wrongEmail),
        (.wrongIssuer, .wrongIssuer),
        (.emailNotVerified, .emailNotVerified),
        (.expired, .expired),
        (.unknownKey, .unknownKey),
        (.tamperedSignature, .badSignature),
    ])
    func badPushToken(_ fault: PushTokenFault, _ code: PushTokenError.Code) async throws {
        let harness = try GoogleHarness(retry: PushRetryPolicy(minimumBackoff: .zero, maximumBackoff: .zero, maxAttempts: 1))
        try harness.simulator.sendBadPushTokens(fault)
        let result = try await harness.simulator.purchase(productId: GoogleFixture.monthly, basePlanId: "monthly", price: 999,
                                                          currency: "USD")
        #expect(result.pushes.first?.tokenFault == fault)
        let authorization = try #require(harness.ingest.received.current.first?.authorization)
        let verifier = harness.verifier()
        let error = await #expect(throws: PushTokenError.self) { try await verifier.verify(authorization: authorization) }
        #expect(error?.code == code, "\(String(describing: error))")
        // The fault is spent: the next push verifies.
        _ = try await harness.simulator.renew(try #require(result.purchaseToken))
        let next = try #require(harness.ingest.received.current.last?.authorization)
        _ = try await verifier.verify(authorization: next)
        await harness.close()
    }

    @Test func aMissingTokenSendsNoAuthorizationHeader() async throws {
        let harness = try GoogleHarness()
        try harness.simulator.sendBadPushTokens(.missing)
        try await harness.purchase(silent: false)
        let received = try #require(harness.ingest.received.current.first)
        #expect(received.authorization == nil)
        await harness.close()
    }

    @Test func rotatedKeysVerifyAfterARefetchAndRetiredOnesStopVerifying() async throws {
        let harness = try GoogleHarness()
        let cacheClock = Locked(Date())
        let verifier = harness.verifier(cacheClock: cacheClock)
        let token = try await harness.purchase(silent: false)
        let first = try #require(harness.ingest.received.current.last?.authorization)
        _ = try await verifier.verify(authorization: first)

        let kid = try harness.simulator.rotatePushKey(to: GoogleFixture.secondPushKey.get())
        #expect(harness.simulator.pushKeyIDs.count == 2 && harness.simulator.pushKeyIDs.last == kid)
        _ = try await harness.simulator.renew(token)
        let second = try #require(harness.ingest.received.current.last?.authorization)
        #expect(try CompactJWS(String(second.dropFirst(7))).header.kid == kid)
        // The cached set lacks the new kid; once the cache's refetch pacing allows, it refetches and both verify.
        cacheClock.withLock { $0 += Double(GoogleKeyCache.unknownKeyRefetchInterval.components.seconds) + 1 }
        _ = try await verifier.verify(authorization: second)
        _ = try await verifier.verify(authorization: first)

        try harness.simulator.rotatePushKey(to: GoogleFixture.pushKey.get(), keepPrevious: false)
        #expect(harness.simulator.pushKeyIDs.count == 1)
        let fresh = harness.verifier()
        _ = try await fresh.verify(authorization: first)
        let error = await #expect(throws: PushTokenError.self) { try await fresh.verify(authorization: second) }
        #expect(error?.code == .unknownKey)
        await harness.close()
    }
}
