import Crypto
import Foundation
import GooglePlay
import TestSupport
import Testing

/// Guards `GoogleKeyCache`: keys are fetched once and kept per max-age (floored at a minute, capped at a
/// day, an hour by default), an unknown kid refetches at most once per minute, concurrent callers share
/// one fetch, and a failed fetch is the retryable `keysUnavailable` that holds off further fetches for the
/// backoff while the expired key set keeps serving for its grace. The clock is moved by hand.
@Suite("Google key cache")
struct GoogleKeyCacheTests {
    /// A cache over `fetcher` on a clock of the test's own.
    static func cache(fetching fetcher: ScriptedFetcher) -> (TestClock, GoogleKeyCache) {
        let clock = TestClock()
        return (clock, GoogleKeyCache(fetcher: fetcher, now: clock.closure))
    }

    static let setA = try! jwks([("key-a", TestKeys.a)])
    static let setAB = try! jwks([("key-a", TestKeys.a), ("key-b", TestKeys.b)])

    @Test("keys are fetched on first use and served from the cache while fresh")
    func cachesWhileFresh() async throws {
        let fetcher = ScriptedFetcher(keySets: [Self.setA])
        let (clock, cache) = Self.cache(fetching: fetcher)
        #expect(await fetcher.fetchCount == 0)
        for _ in 0..<5 {
            #expect(try await cache.key(for: "key-a") != nil)
            clock.advance(by: 600)
        }
        #expect(await fetcher.fetchCount == 1)
    }

    @Test("without max-age the keys expire after an hour")
    func defaultLifetime() async throws {
        let fetcher = ScriptedFetcher(keySets: [Self.setA])
        let (clock, cache) = Self.cache(fetching: fetcher)
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
        let fetcher = ScriptedFetcher(keySets: [Self.setA], maxAge: .seconds(maxAge))
        let (clock, cache) = Self.cache(fetching: fetcher)
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
        let fetcher = ScriptedFetcher(keySets: [Self.setA, Self.setAB])
        let (clock, cache) = Self.cache(fetching: fetcher)
        #expect(try await cache.key(for: "key-b") == nil, "a kid unknown right after a fetch refetches nothing")
        #expect(await fetcher.fetchCount == 1)
        clock.advance(by: 60)
        #expect(try await cache.key(for: "key-b") != nil)
        #expect(try await cache.key(for: "key-a") != nil)
        #expect(await fetcher.fetchCount == 2)
    }

    @Test("unknown kids refetch at most once a minute")
    func unknownKidPacing() async throws {
        let fetcher = ScriptedFetcher(keySets: [Self.setA])
        let (clock, cache) = Self.cache(fetching: fetcher)
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

    static let backoff = GoogleKeyCache.failedFetchBackoff.seconds
    static let grace = GoogleKeyCache.staleGrace.seconds

    @Test("a failed fetch is the retryable keysUnavailable; the next fetch waits for the backoff")
    func failedFetch() async throws {
        let fetcher = ScriptedFetcher([.failure(FetchFailed()), .success(JWKSDocument(json: Self.setA))])
        let (clock, cache) = Self.cache(fetching: fetcher)
        let error = await #expect(throws: PushTokenError.self) { try await cache.key(for: "key-a") }
        #expect(error?.code == .keysUnavailable)
        #expect(error?.isRetryable == true)
        clock.advance(by: Self.backoff - 1)
        let held = await #expect(throws: PushTokenError.self) { try await cache.key(for: "key-a") }
        #expect(held?.code == .keysUnavailable)
        #expect(await fetcher.fetchCount == 1, "fetched again within the backoff")
        clock.advance(by: 1)
        #expect(try await cache.key(for: "key-a") != nil)
        #expect(await fetcher.fetchCount == 2)
    }

    @Test("during an outage, pushes every second cost one fetch per backoff", arguments: [false, true])
    func outagePacing(warm: Bool) async throws {
        let fetcher = ScriptedFetcher(warm ? [.success(JWKSDocument(json: Self.setA)), .failure(FetchFailed())]
                                           : [.failure(FetchFailed())])
        let (clock, cache) = Self.cache(fetching: fetcher)
        if warm {
            _ = try await cache.key(for: "key-a")
            clock.advance(by: 3600)
        }
        let fetchesBefore = await fetcher.fetchCount
        let minutes = 10
        for second in 0..<(minutes * 60) {
            for kid in ["key-a", "forged-\(second)"] {
                do {
                    let key = try await cache.key(for: kid)
                    #expect(warm && kid == "key-a" && key != nil, "\(kid) at \(second) s gave a key: \(key != nil)")
                } catch let error as PushTokenError {
                    #expect(error.code == .keysUnavailable)
                    #expect(!warm || kid != "key-a", "the stale key was not served at \(second) s")
                }
            }
            clock.advance(by: 1)
        }
        #expect(await fetcher.fetchCount - fetchesBefore == minutes * 60 / Int(Self.backoff))
    }

    @Test("concurrent callers during an outage share one failing fetch")
    func singleFlightFailure() async throws {
        let started = Counter()
        let callers = 20
        let fetcher = ScriptedFetcher([.failure(FetchFailed())], gate: (started, callers))
        let cache = GoogleKeyCache(fetcher: fetcher, now: TestClock().closure)
        let failures = await withTaskGroup(of: PushTokenError.Code?.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    started.increment()
                    do {
                        _ = try await cache.key(for: "key-a")
                        return nil
                    } catch {
                        return (error as? PushTokenError)?.code
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(failures == Array(repeating: .keysUnavailable, count: callers))
        #expect(await fetcher.fetchCount == 1)
    }

    @Test("while fetching fails, expired keys verify for the grace, then not")
    func staleGrace() async throws {
        let fetcher = ScriptedFetcher([.success(JWKSDocument(json: Self.setA)), .failure(FetchFailed())])
        let (clock, cache) = Self.cache(fetching: fetcher)
        _ = try await cache.key(for: "key-a")
        clock.advance(by: 3600)
        #expect(try await cache.key(for: "key-a") != nil, "the stale key set was not served when the refetch failed")
        #expect(await fetcher.fetchCount == 2)
        clock.advance(by: Self.grace - 1)
        #expect(try await cache.key(for: "key-a") != nil, "the stale key set was not served at the end of the grace")
        #expect(await fetcher.fetchCount == 3)
        clock.advance(by: 1)
        let error = await #expect(throws: PushTokenError.self) { try await cache.key(for: "key-a") }
        #expect(error?.code == .keysUnavailable)
        #expect(await fetcher.fetchCount == 3, "fetched within the backoff")
    }

    @Test("a recovered fetch ends the grace and the backoff")
    func recovery() async throws {
        let fetcher = ScriptedFetcher([.success(JWKSDocument(json: Self.setA)), .failure(FetchFailed()),
                                       .success(JWKSDocument(json: Self.setAB))])
        let (clock, cache) = Self.cache(fetching: fetcher)
        _ = try await cache.key(for: "key-a")
        clock.advance(by: 3600)
        let unknown = await #expect(throws: PushTokenError.self) { try await cache.key(for: "key-b") }
        #expect(unknown?.code == .keysUnavailable, "a kid missing from the stale set is not known to be forged")
        #expect(await fetcher.fetchCount == 2)
        clock.advance(by: Self.backoff)
        #expect(try await cache.key(for: "key-b") != nil)
        #expect(try await cache.key(for: "forged") == nil, "after a good fetch an unknown kid is unknown again")
        clock.advance(by: 3599)
        #expect(try await cache.key(for: "key-a") != nil)
        #expect(await fetcher.fetchCount == 3, "the recovered key set did not get its full lifetime")
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
