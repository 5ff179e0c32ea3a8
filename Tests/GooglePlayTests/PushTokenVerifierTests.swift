import Crypto
import Foundation
import GooglePlay
import TestSupport
import Testing

/// Guards `PushTokenVerifier`, the gate in front of Pub/Sub pushes: a genuine Google token for this
/// endpoint and service account passes; every other token is refused with the code of the first check it
/// fails, and no message repeats the token.
@Suite("Push token verifier")
struct PushTokenVerifierTests {
    /// A rejection: what is changed on an otherwise valid token, and the code it must get.
    struct Rejection: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let code: PushTokenError.Code
        let change: @Sendable (inout TokenSpec, Date) -> Void

        init(_ name: String, _ code: PushTokenError.Code, _ change: @escaping @Sendable (inout TokenSpec, Date) -> Void) {
            testDescription = name
            self.code = code
            self.change = change
        }
    }

    static let rejections: [Rejection] = [
        Rejection("kid not among Google's keys", .unknownKey) { spec, _ in spec.header["kid"] = "key-z" },
        Rejection("no kid", .unknownKey) { spec, _ in spec.header["kid"] = nil },
        Rejection("signed by another key than its kid names", .badSignature) { spec, _ in spec.key = TestKeys.b },
        Rejection("iss of another issuer", .wrongIssuer) { spec, _ in spec.claims["iss"] = "https://evil.example.com" },
        Rejection("iss over plain http", .wrongIssuer) { spec, _ in spec.claims["iss"] = "http://accounts.google.com" },
        Rejection("no iss", .wrongIssuer) { spec, _ in spec.claims["iss"] = nil },
        Rejection("aud of another endpoint", .wrongAudience) { spec, _ in
            spec.claims["aud"] = "https://other.example.com/google/push"
        },
        Rejection("aud with a trailing slash", .wrongAudience) { spec, _ in spec.claims["aud"] = TokenSpec.audience + "/" },
        Rejection("no aud", .wrongAudience) { spec, _ in spec.claims["aud"] = nil },
        Rejection("email of another service account", .wrongEmail) { spec, _ in
            spec.claims["email"] = "intruder@evil-project.iam.gserviceaccount.com"
        },
        Rejection("email differing in case", .wrongEmail) { spec, _ in spec.claims["email"] = TokenSpec.email.uppercased() },
        Rejection("no email", .wrongEmail) { spec, _ in spec.claims["email"] = nil },
        Rejection("email_verified false", .emailNotVerified) { spec, _ in spec.claims["email_verified"] = false },
        Rejection("email_verified the string true", .emailNotVerified) { spec, _ in spec.claims["email_verified"] = "true" },
        Rejection("no email_verified", .emailNotVerified) { spec, _ in spec.claims["email_verified"] = nil },
        Rejection("expired beyond the skew", .expired) { spec, now in
            spec.claims["iat"] = Int(now.timeIntervalSince1970) - 3661
            spec.claims["exp"] = Int(now.timeIntervalSince1970) - 61
        },
        Rejection("issued beyond the skew in the future", .issuedInFuture) { spec, now in
            spec.claims["iat"] = Int(now.timeIntervalSince1970) + 61
            spec.claims["exp"] = Int(now.timeIntervalSince1970) + 3661
        },
        Rejection("exp as a string", .malformed) { spec, now in spec.claims["exp"] = "\(Int(now.timeIntervalSince1970) + 60)" },
        Rejection("no exp", .malformed) { spec, _ in spec.claims["exp"] = nil },
        Rejection("aud as an array", .malformed) { spec, _ in spec.claims["aud"] = [TokenSpec.audience] },
        Rejection("alg HS256", .unsupportedAlgorithm) { spec, _ in spec.header["alg"] = "HS256" },
        Rejection("crit naming an extension not understood", .unsupportedHeader) { spec, _ in spec.header["crit"] = ["exp"] },
        Rejection("crit empty", .unsupportedHeader) { spec, _ in spec.header["crit"] = [String]() },
        Rejection("b64 false", .unsupportedHeader) { spec, _ in spec.header["b64"] = false },
        Rejection("b64 false named in crit", .unsupportedHeader) { spec, _ in
            spec.header["b64"] = false
            spec.header["crit"] = ["b64"]
        },
        Rejection("bad signature and wrong issuer reports the signature", .badSignature) { spec, _ in
            spec.key = TestKeys.b
            spec.claims["iss"] = "https://evil.example.com"
        },
        Rejection("wrong audience and expired reports the audience", .wrongAudience) { spec, now in
            spec.claims["aud"] = "https://other.example.com"
            spec.claims["exp"] = Int(now.timeIntervalSince1970) - 3600
        },
    ]

    @Test("malformed claims name the claim at fault and what was wrong", arguments: [
        ("exp", "in an hour" as (any Sendable)?, "bad exp: expected a number, found a string"),
        ("exp", nil, "missing exp"), ("iat", NSNull(), "missing iat"), ("iat", true, "bad iat: expected a number, found a boolean"),
        ("aud", [TokenSpec.audience], "bad aud: expected a string, found an array"),
        ("sub", 112_233, "bad sub: expected a string, found a number"),
    ] as [(String, (any Sendable)?, String)])
    func malformedClaims(claim: String, value: (any Sendable)?, reason: String) async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        var spec = TokenSpec(now: clock.now)
        spec.claims[claim] = value
        let error = await #expect(throws: PushTokenError.self) {
            try await verifier.verify(authorization: "Bearer " + (try spec.token()), now: clock.now)
        }
        #expect(error?.code == .malformed)
        #expect(error?.reason.hasSuffix(reason) == true, "\(error?.reason ?? "accepted")")
    }

    @Test("exp and iat may carry a fraction (a NumericDate); other claims and unknown ones are skipped")
    func fractionalTimes() async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        var spec = TokenSpec(now: clock.now)
        let now = clock.now.timeIntervalSince1970.rounded(.down)
        spec.claims["iat"] = now + 0.5
        spec.claims["exp"] = now + 3600.25
        spec.claims["azp"] = ["nested": [1, 2.5, NSNull()] as [Any]]
        let claims = try await verifier.verify(authorization: spec.authorization(), now: clock.now)
        #expect(claims.issuedAt == Date(timeIntervalSince1970: now + 0.5))
        #expect(claims.expiresAt == Date(timeIntervalSince1970: now + 3600.25))
    }

    /// A verifier whose cache has already fetched key A more than a minute ago, so an unknown kid may refetch.
    static func warmVerifier(clock: TestClock, keySets: [Data]? = nil) async throws -> (PushTokenVerifier, ScriptedFetcher) {
        let fetcher = ScriptedFetcher(keySets: try keySets ?? [jwks([("key-a", TestKeys.a)])])
        let cache = GoogleKeyCache(fetcher: fetcher, now: clock.closure)
        _ = try await cache.key(for: "key-a")
        clock.advance(by: 61)
        return (PushTokenVerifier(audience: TokenSpec.audience, serviceAccountEmail: TokenSpec.email, keys: cache), fetcher)
    }

    @Test("a genuine token passes and returns its claims")
    func valid() async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        let spec = TokenSpec(now: clock.now)
        let claims = try await verifier.verify(authorization: spec.authorization(), now: clock.now)
        let issuedAt = Date(timeIntervalSince1970: clock.now.timeIntervalSince1970.rounded(.down))
        #expect(claims.issuer == "https://accounts.google.com")
        #expect(claims.audience == TokenSpec.audience)
        #expect(claims.email == TokenSpec.email)
        #expect(claims.subject == "112233445566778899000")
        #expect(claims.issuedAt == issuedAt)
        #expect(claims.expiresAt == issuedAt.addingTimeInterval(3600))
    }

    @Test("both spellings of Google's issuer pass", arguments: ["accounts.google.com", "https://accounts.google.com"])
    func issuers(issuer: String) async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        var spec = TokenSpec(now: clock.now)
        spec.claims["iss"] = issuer
        #expect(try await verifier.verify(authorization: spec.authorization(), now: clock.now).issuer == issuer)
    }

    @Test("the Bearer scheme is case-insensitive", arguments: ["Bearer ", "bearer ", "BEARER ", "Bearer   ", " Bearer "])
    func scheme(prefix: String) async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        let token = try TokenSpec(now: clock.now).token()
        _ = try await verifier.verify(authorization: prefix + token + " ", now: clock.now)
    }

    @Test("a token that fails one check gets that check's code", arguments: rejections)
    func rejected(rejection: Rejection) async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        var spec = TokenSpec(now: clock.now)
        rejection.change(&spec, clock.now)
        let token = try spec.token()
        let error = await #expect(throws: PushTokenError.self) {
            try await verifier.verify(authorization: "Bearer " + token, now: clock.now)
        }
        #expect(error?.code == rejection.code)
        #expect(error?.isRetryable == false)
        let signature = String(token.split(separator: ".").last!)
        #expect(error.map { !"\($0)".contains(signature) && !"\($0)".contains(token) } == true, "the message repeats the token")
    }

    @Test("an Authorization that is not a Bearer JWS is malformed", arguments: [
        "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearertoken", "Bearer a.b", "Bearer a.b.c.d", "Bearer a..c",
        "Bearer eyJ0.eyJ0.c2ln", "Bearer e30.e30.c2ln", "Bearer eyJhbGciOiJSUzI1NiJ9.WzFd.c2ln",
        "Bearer " + String(repeating: "a", count: 9000),
    ])
    func malformed(authorization: String) async throws {
        let clock = TestClock()
        let (verifier, fetcher) = try await Self.warmVerifier(clock: clock)
        let error = await #expect(throws: PushTokenError.self) {
            try await verifier.verify(authorization: authorization, now: clock.now)
        }
        #expect(error?.code == .malformed)
        #expect(await fetcher.fetchCount == 1)
    }

    @Test("a token with whitespace inside is malformed")
    func whitespaceInside() async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        let token = try TokenSpec(now: clock.now).token()
        let error = await #expect(throws: PushTokenError.self) {
            try await verifier.verify(authorization: "Bearer " + token.replacingOccurrences(of: ".", with: ". "), now: clock.now)
        }
        #expect(error?.code == .malformed)
    }

    @Test("an alg other than RS256 is refused before any key is fetched", arguments: ["HS256", "none", "ES256", "RS384", nil])
    func algorithmBeforeKeys(alg: String?) async throws {
        let clock = TestClock()
        let fetcher = ScriptedFetcher(keySets: [try jwks([("key-a", TestKeys.a)])])
        let verifier = PushTokenVerifier(audience: TokenSpec.audience, serviceAccountEmail: TokenSpec.email,
                                         keys: GoogleKeyCache(fetcher: fetcher, now: clock.closure))
        var spec = TokenSpec(now: clock.now)
        spec.header["alg"] = alg
        let error = await #expect(throws: PushTokenError.self) {
            try await verifier.verify(authorization: spec.authorization(), now: clock.now)
        }
        #expect(error?.code == .unsupportedAlgorithm)
        #expect(await fetcher.fetchCount == 0)
    }

    @Test("an unknown kid refetches once, then is refused")
    func unknownKidRefetchesOnce() async throws {
        let clock = TestClock()
        let (verifier, fetcher) = try await Self.warmVerifier(clock: clock)
        var spec = TokenSpec(now: clock.now)
        spec.header["kid"] = "key-z"
        for _ in 0..<3 {
            let error = await #expect(throws: PushTokenError.self) {
                try await verifier.verify(authorization: spec.authorization(), now: clock.now)
            }
            #expect(error?.code == .unknownKey)
        }
        #expect(await fetcher.fetchCount == 2)
    }

    @Test("key rotation: a token signed with the new key refetches once and passes; another unknown kid does not refetch")
    func rotation() async throws {
        let clock = TestClock()
        let (verifier, fetcher) = try await Self.warmVerifier(
            clock: clock, keySets: [try jwks([("key-a", TestKeys.a)]), try jwks([("key-b", TestKeys.b)])])
        var spec = TokenSpec(now: clock.now)
        spec.header["kid"] = "key-b"
        spec.key = TestKeys.b
        _ = try await verifier.verify(authorization: spec.authorization(), now: clock.now)
        #expect(await fetcher.fetchCount == 2)
        _ = try await verifier.verify(authorization: spec.authorization(), now: clock.now)
        #expect(await fetcher.fetchCount == 2)

        clock.advance(by: 30)
        spec.header["kid"] = "key-c"
        let error = await #expect(throws: PushTokenError.self) {
            try await verifier.verify(authorization: spec.authorization(), now: clock.now)
        }
        #expect(error?.code == .unknownKey)
        #expect(await fetcher.fetchCount == 2)

        spec.header["kid"] = "key-a"
        spec.key = TestKeys.a
        let retired = await #expect(throws: PushTokenError.self) {
            try await verifier.verify(authorization: spec.authorization(), now: clock.now)
        }
        #expect(retired?.code == .unknownKey, "a key dropped from the set is no longer trusted")
    }

    @Test("concurrent pushes on a cold cache share one key fetch")
    func concurrentPushes() async throws {
        let clock = TestClock()
        let started = Counter()
        let pushes = 16
        let fetcher = ScriptedFetcher([.success(JWKSDocument(json: try jwks([("key-a", TestKeys.a)])))],
                                      gate: (started, pushes))
        let verifier = PushTokenVerifier(audience: TokenSpec.audience, serviceAccountEmail: TokenSpec.email,
                                         keys: GoogleKeyCache(fetcher: fetcher, now: clock.closure))
        let authorization = try TokenSpec(now: clock.now).authorization()
        let now = clock.now
        try await withThrowingTaskGroup(of: PushTokenClaims.self) { group in
            for _ in 0..<pushes {
                group.addTask {
                    started.increment()
                    return try await verifier.verify(authorization: authorization, now: now)
                }
            }
            for try await claims in group { #expect(claims.email == TokenSpec.email) }
        }
        #expect(await fetcher.fetchCount == 1)
    }

    @Test("a failing key fetch gives the retryable keysUnavailable")
    func keysUnavailable() async throws {
        let clock = TestClock()
        let verifier = PushTokenVerifier(audience: TokenSpec.audience, serviceAccountEmail: TokenSpec.email,
                                         keys: GoogleKeyCache(fetcher: ScriptedFetcher([.failure(FetchFailed())]),
                                                              now: clock.closure))
        let error = await #expect(throws: PushTokenError.self) {
            try await verifier.verify(authorization: TokenSpec(now: clock.now).authorization(), now: clock.now)
        }
        #expect(error?.code == .keysUnavailable)
        #expect(error?.isRetryable == true)
    }

    @Test("age limits: exp may be up to 60 s past, so tokens up to an hour old pass", arguments: [
        (3540, 3600), (3600, 3600), (3660, 3600), (0, 60), (-60, 3600),
    ] as [(Int, Int)])
    func ageAccepted(age: Int, lifetime: Int) async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        var spec = TokenSpec(now: clock.now)
        let iat = Int(clock.now.timeIntervalSince1970) - age
        spec.claims["iat"] = iat
        spec.claims["exp"] = iat + lifetime
        _ = try await verifier.verify(authorization: spec.authorization(), now: clock.now)
    }

    /// A stored push is checked when its job runs, which may be hours later (a backlog, a retry series, a
    /// dead-letter replay): its token is judged at the time it was received.
    @Test("time claims are judged when the push was received, however much later it is checked", arguments: [
        (30, nil), (-60, nil), (-61, PushTokenError.Code.expired),
    ] as [(Int, PushTokenError.Code?)])
    func judgedAtReceipt(expiresAfterReceipt: Int, code: PushTokenError.Code?) async throws {
        let clock = TestClock()
        let (verifier, _) = try await Self.warmVerifier(clock: clock)
        let receivedAt = clock.now
        var spec = TokenSpec(now: receivedAt)
        let exp = Int(receivedAt.timeIntervalSince1970) + expiresAfterReceipt
        spec.claims["exp"] = exp
        spec.claims["iat"] = exp - 3600
        let authorization = try spec.authorization()
        clock.advance(by: 6 * 3600)
        if let code {
            let error = await #expect(throws: PushTokenError.self) {
                try await verifier.verify(authorization: authorization, now: receivedAt)
            }
            #expect(error?.code == code)
        } else {
            let claims = try await verifier.verify(authorization: authorization, now: receivedAt)
            #expect(claims.expiresAt < clock.now)
            let late = await #expect(throws: PushTokenError.self) {
                try await verifier.verify(authorization: authorization, now: clock.now)
            }
            #expect(late?.code == .expired, "judged at the wall clock, the same token is expired")
        }
    }

    @Test("the error description names the code and reason")
    func errorDescription() {
        let error = PushTokenError(.wrongAudience, "aud is \"x\"")
        #expect(error.description == "push token rejected (wrong audience): aud is \"x\"")
    }
}
