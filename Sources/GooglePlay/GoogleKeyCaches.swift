import HTTP
import Synchronization

/// One `GoogleKeyCache` per JWKS URL for a process: connections that trust the same keys (Google's, in
/// production) share one cache, so a push costs one key fetch per process however many connections see it.
public final class GoogleKeyCaches: Sendable {
    private let http: HTTPClient
    private let caches = Mutex<[String: GoogleKeyCache]>([:])

    public init(http: HTTPClient) {
        self.http = http
    }

    /// The cache for `url`, Google's own certificates when nil.
    public func cache(for url: String?) -> GoogleKeyCache {
        let url = url ?? GoogleKeyCache.googleCertificatesURL.absoluteString
        let http = http
        return caches.withLock { caches in
            if let cache = caches[url] { return cache }
            let cache = GoogleKeyCache(fetcher: HTTPJWKSFetcher(url: url, client: http))
            caches[url] = cache
            return cache
        }
    }
}
