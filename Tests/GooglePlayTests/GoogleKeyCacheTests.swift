import Crypto
import Foundation
import GooglePlay
import TestSupport
import Testing

/// Guards `GoogleKeyCache`: keys are fetched once and kept per max-age (floored at a minute, capped at a
/// day, an hour by default), an unknown kid refetches at most once per minute, concurrent callers share
/// one fetch, and a failed fetch is the retryable `keysUnavailable`. The clock is moved by hand.
@Suite("Google key cache")
struct GoogleKeyCacheTests {
    static let setA = try! jwks([("key-a", TestKeys.a)])
    static let setAB = try! jwks([("key-a", TestKeys.a), ("key-b", TestKeys.b)])

    @Test("keys are fetched on first use and served from the cache while fresh")
    func cachesWhileFresh() async throws {
        let clock = TestClock()
        let fetcher = ScriptedFetcher(keySets: [Self.setA])
        let cache = GoogleKeyCache(fetcher: fetcher, now: clock.closure)
        #expect(await fetcher.fetchCount == 0)
        for _ in 0..<5 {
            #expect(try await cache.key(for: "key-a") != nil)
            clock.advance(by: 600)
        }
        #expect(await fetcher.fetchCount == 1)
    }

    @Test("without max-age the keys expire after an hour")
    func defaultLifetime() async throws {
        let clock = TestClock()
        let fetcher = ScriptedFetcher(keySets: [Self.setA])
        let cache = GoogleKeyCache(fetcher: fetcher, now: clock.closure)
        _ = try await cache.key(for: "key-a")
        clock.advance(by: 3599)
        _ = try await cache.key(for: "key-a")
        #expect(await fetcher.fetchCount == 1)
        clock.advance(by: 1)
        _ = try await cache.key(for: "key-a")
        #expect(await fetcher.fetchCount == 2)
    }

    @Test("max-age sets the lifetime, floored at a minute and capped at a day", arguments: [
        (300, 300), (0, 60), (30, 60), (10 * 24 * 3600, 24 * 3600),
    ] as [(Int, Int)])
    func maxAgeLifetime(maxAge: Int, lifetime: Int) async throws {
        let clock = TestClock()
        let fetcher = ScriptedFetcher(keySets: [Self.setA], maxAge: .seconds(maxAge))
        let cache = GoogleKeyCache(fetcher: fetcher, now: clock.closure)
        _ = try await cache.key(for: "key-a")
        clock.advance(by: TimeInterval(lifetime - 1))
        _ = try await cache.key(for: "key-a")
        #expect(await fetcher.fetchCount == 1, "refetched before the lifetime of \(lifetime) s ran out")
        clock.advance(by: 1)
        _ = try await cache.key(for: "key-a")
        #expect(await fetcher.fetchCount == 2, "kept keys past the lifetime of \(lifetime) s")
    }

    @Test("key rotation: an unknown kid refetches and finds the new key")
    func rotation() async throws {
        let clock = TestClock()
        let fetcher = ScriptedFetcher(keySets: [Self.setA, Self.setAB])
        let cache = GoogleKeyCache(fetcher: fetcher, now: clock.closure)
        #expect(try await cache.key(for: "key-b") == nil, "a kid unknown right after a fetch refetches nothing")
        #expect(await fetcher.fetchCount == 1)
        clock.advance(by: 60)
        #expect(try await cache.key(for: "key-b") != nil)
        #expect(try await cache.key(for: "key-a") != nil)
        #expect(await fetcher.fetchCount == 2)
    }

    @Test("unknown kids refetch at most once a minute")
    func unknownKidPacing() async throws {
        let clock = TestClock()
        let fetcher = ScriptedFetcher(keySets: [Self.setA])
        let cache = GoogleKeyCache(fetcher: fetcher, now: clock.closure)
        _ = try await cache.key(for: "key-a")
        clock.advance(by: 61)
        #expect(try await cache.key(for: "forged-1") == nil)
        #expect(await fetcher.fetchCount == 2)
        for kid in ["forged-2", "forged-3", "forged-1"] {
            clock.advance(by: 19)
            #expect(try await cache.key(for: kid) == nil)
        }
        #expect(await fetcher.fetchCount == 2, "refetched within a minute of the last fetch")
        clock.advance(by: 3)
        #expect(try await cache.key(for: "forged-4") == nil)
        #expect(await fetcher.fetchCount == 3)
    }

    @Test("concurrent callers on a cold cache share one fetch")
    func singleFlight() async throws {
        let started = Counter()
        let callers = 20
        let fetcher = ScriptedFetcher([.success(JWKSDocument(json: Self.setA))], gate: (started, callers))
        let cache = GoogleKeyCache(fetcher: fetcher)
        let found = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    started.increment()
                    return try await cache.key(for: "key-a") != nil
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(found == callers)
        #expect(await fetcher.fetchCount == 1)
    }

    @Test("a failed fetch is the retryable keysUnavailable, and the next use tries again")
    func failedFetch() async throws {
        let clock = TestClock()
        let fetcher = ScriptedFetcher([.failure(FetchFailed()), .success(JWKSDocument(json: Self.setA))])
        let cache = GoogleKeyCache(fetcher: fetcher, now: clock.closure)
        let error = await #expect(throws: PushTokenError.self) { try await cache.key(for: "key-a") }
        #expect(error?.code == .keysUnavailable)
        #expect(error?.isRetryable == true)
        #expect(try await cache.key(for: "key-a") != nil)
        #expect(await fetcher.fetchCount == 2)
    }

    @Test("expired keys are not used when the refetch fails")
    func noStaleKeys() async throws {
        let clock = TestClock()
        let fetcher = ScriptedFetcher([.success(JWKSDocument(json: Self.setA)), .failure(FetchFailed())])
        let cache = GoogleKeyCache(fetcher: fetcher, now: clock.closure)
        _ = try await cache.key(for: "key-a")
        clock.advance(by: 3600)
        let error = await #expect(throws: PushTokenError.self) { try await cache.key(for: "key-a") }
        #expect(error?.code == .keysUnavailable)
    }

    @Test("a key set that does not parse is keysUnavailable", arguments: [
        Data("not json".utf8), Data(#"{"keys":[]}"#.utf8), Data(#"{"keys":[{"kty":"EC","kid":"x"}]}"#.utf8),
    ])
    func unusableKeySet(json: Data) async throws {
        let cache = GoogleKeyCache(fetcher: ScriptedFetcher([.success(JWKSDocument(json: json))]))
        let error = await #expect(throws: PushTokenError.self) { try await cache.key(for: "key-a") }
        #expect(error?.code == .keysUnavailable)
    }
}
