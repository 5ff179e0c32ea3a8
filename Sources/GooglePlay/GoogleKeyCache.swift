import Crypto
import Foundation
import Logging

/// Google's token-signing keys, fetched when first needed and kept for as long as Google's
/// `Cache-Control: max-age` says. Pushes arrive in bursts and anyone can post one, so the cache, not the
/// traffic, decides when Google is asked: concurrent verifications share one fetch, a token naming a key the
/// cache does not hold triggers at most one refetch per minute, and after a failed fetch no fetch starts for
/// a minute — during an outage at Google, forged pushes and retries cannot turn into a flood of requests.
/// Meanwhile the last key set keeps verifying for a bounded grace past its expiry (Google publishes new keys
/// well before it stops signing with the old ones), so an outage shorter than the grace delays nothing.
public actor GoogleKeyCache {
    /// Where Google publishes the keys that sign Pub/Sub push tokens; the HTTP fetcher's default.
    public static let googleCertificatesURL = URL(string: "https://www.googleapis.com/oauth2/v3/certs")!
    /// How long a key set stays fresh when the fetcher reports no `max-age`.
    public static let defaultLifetime: Duration = .seconds(3600)
    /// Floor on a reported `max-age`: a `max-age=0` must not make every push fetch the keys again.
    public static let minimumLifetime: Duration = .seconds(60)
    /// Ceiling on a reported `max-age`, so a retired key stops being trusted within a day.
    public static let maximumLifetime: Duration = .seconds(24 * 3600)
    /// The least time between two fetches when a token names a key the cache does not hold.
    public static let unknownKeyRefetchInterval: Duration = .seconds(60)
    /// How long after a failed fetch the next one may start; as long as the unknown-key pacing, so the cache
    /// never asks Google more than about once a minute, whatever arrives.
    public static let failedFetchBackoff: Duration = unknownKeyRefetchInterval
    /// How long past its expiry a key set is still trusted while fetching a new one fails. Bounded, so a key
    /// Google retired is not trusted indefinitely just because its key set cannot be read.
    public static let staleGrace: Duration = .seconds(3600)

    /// The last fetch failed: why, and when the next one may start.
    private struct Failure {
        let reason: String
        let retryAt: Date
    }

    private let fetcher: any JWKSFetcher
    private let now: @Sendable () -> Date
    private let logger = Logger(component: "google-keys")
    private var keySet: JSONWebKeySet?
    private var expiresAt = Date.distantPast
    private var lastFetchStarted: Date?
    private var failure: Failure?
    private var inFlight: Task<(JSONWebKeySet, Duration?), any Error>?

    /// `now` is the cache's clock for freshness, grace and fetch pacing; tests pass a controllable one.
    public init(fetcher: any JWKSFetcher, now: @escaping @Sendable () -> Date = { Date() }) {
        self.fetcher = fetcher
        self.now = now
    }

    /// The key `kid` names, or `nil` when Google does not publish it (after the one refetch the pacing
    /// allows). Throws `PushTokenError` `.keysUnavailable` when there is no usable key set, or when `kid` is
    /// not in the one served while fetching fails (Google may have published it since).
    public func key(for kid: String) async throws -> PublicKey? {
        let current = try await usableKeySet()
        if let key = current.keys[kid] { return key }
        if inFlight != nil || (mayRefetchForUnknownKey && !backingOff) {
            return try await refresh().keys[kid]
        }
        if let failure { throw Self.unavailable(failure) }
        return nil
    }

    /// The fresh key set, else a new one, else — while fetching fails — the stale one within its grace.
    private func usableKeySet() async throws -> JSONWebKeySet {
        if let keySet, now() < expiresAt { return keySet }
        if inFlight == nil, let failure, now() < failure.retryAt {
            if let keySet, now() < staleUntil { return keySet }
            throw Self.unavailable(failure)
        }
        do {
            return try await refresh()
        } catch {
            guard let keySet, now() < staleUntil else { throw error }
            return keySet
        }
    }

    private var staleUntil: Date { expiresAt.addingTimeInterval(Self.staleGrace.seconds) }

    private var backingOff: Bool {
        guard let failure else { return false }
        return now() < failure.retryAt
    }

    private var mayRefetchForUnknownKey: Bool {
        guard let lastFetchStarted else { return true }
        return now().timeIntervalSince(lastFetchStarted) >= Self.unknownKeyRefetchInterval.seconds
    }

    private static func unavailable(_ failure: Failure) -> PushTokenError {
        PushTokenError(.keysUnavailable, "\(failure.reason); the next fetch starts no earlier than \(failure.retryAt)")
    }

    /// Fetches a new key set, or joins the fetch already under way. A failure is remembered, which starts
    /// the backoff.
    private func refresh() async throws -> JSONWebKeySet {
        if let inFlight { return try await inFlight.value.0 }
        let fetcher = self.fetcher
        let task = Task { try await Self.load(from: fetcher) }
        inFlight = task
        lastFetchStarted = now()
        defer { inFlight = nil }
        do {
            let (fetched, maxAge) = try await task.value
            let lifetime = min(max(maxAge ?? Self.defaultLifetime, Self.minimumLifetime), Self.maximumLifetime)
            keySet = fetched
            expiresAt = now().addingTimeInterval(lifetime.seconds)
            failure = nil
            return fetched
        } catch {
            let reason = (error as? PushTokenError)?.reason ?? "fetching Google's keys failed: \(error)"
            let retryAt = now().addingTimeInterval(Self.failedFetchBackoff.seconds)
            failure = Failure(reason: reason, retryAt: retryAt)
            let cached = keySet == nil ? "none" : "fresh until \(expiresAt), trusted while fetching fails until \(staleUntil)"
            logger.warning("Google's push keys could not be fetched", [
                "reason": .string(reason), "retry_at": .string("\(retryAt)"), "cached_keys": .string(cached),
            ])
            throw PushTokenError(.keysUnavailable, reason)
        }
    }

    private static func load(from fetcher: any JWKSFetcher) async throws -> (JSONWebKeySet, Duration?) {
        let document: JWKSDocument
        do {
            document = try await fetcher.fetchKeySet()
        } catch {
            throw PushTokenError(.keysUnavailable, "fetching Google's keys failed: \(error)")
        }
        do {
            return (try JSONWebKeySet(json: document.json), document.maxAge)
        } catch {
            throw PushTokenError(.keysUnavailable, "Google's key set is unusable: \(error)")
        }
    }
}
