import Crypto
import Foundation
import Logging

/// Google's token-signing keys, fetched when first needed and kept for as long as Google's
/// `Cache-Control: max-age` says. Pushes arrive in bursts: concurrent verifications share one fetch, and a
/// token naming a key the cache does not hold triggers at most one refetch per minute, so forged `kid`s
/// cannot turn pushes into a flood of requests to Google.
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

    private let fetcher: any JWKSFetcher
    private let now: @Sendable () -> Date
    private var keySet: JSONWebKeySet?
    private var expiresAt = Date.distantPast
    private var lastFetchStarted: Date?
    private var inFlight: Task<(JSONWebKeySet, Duration?), any Error>?

    /// `now` is the cache's clock for freshness and refetch pacing; tests pass a controllable one.
    public init(fetcher: any JWKSFetcher, now: @escaping @Sendable () -> Date = { Date() }) {
        self.fetcher = fetcher
        self.now = now
    }

    /// The key `kid` names, or `nil` when Google does not publish it (after the one refetch the pacing
    /// allows). Throws `PushTokenError` `.keysUnavailable` when a needed fetch fails.
    public func key(for kid: String) async throws -> PublicKey? {
        let current: JSONWebKeySet
        if let keySet, now() < expiresAt {
            current = keySet
        } else {
            current = try await refresh()
        }
        if let key = current.keys[kid] { return key }
        guard inFlight != nil || mayRefetchForUnknownKey else { return nil }
        return try await refresh().keys[kid]
    }

    private var mayRefetchForUnknownKey: Bool {
        guard let lastFetchStarted else { return true }
        return now().timeIntervalSince(lastFetchStarted) >= Self.unknownKeyRefetchInterval.seconds
    }

    /// Fetches a new key set, or joins the fetch already under way.
    private func refresh() async throws -> JSONWebKeySet {
        if let inFlight { return try await inFlight.value.0 }
        let fetcher = self.fetcher
        let task = Task { try await Self.load(from: fetcher) }
        inFlight = task
        lastFetchStarted = now()
        defer { inFlight = nil }
        let (fetched, maxAge) = try await task.value
        let lifetime = min(max(maxAge ?? Self.defaultLifetime, Self.minimumLifetime), Self.maximumLifetime)
        keySet = fetched
        expiresAt = now().addingTimeInterval(lifetime.seconds)
        return fetched
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
