import Foundation
import GooglePlay
import Testing

/// Guards `JWKSDocument.maxAge(fromCacheControl:)`, which decides how long Google's keys are cached, and
/// `FileJWKSFetcher`, which serves keys from disk for the CLI and tests.
@Suite("JWKS document and file fetcher")
struct JWKSDocumentTests {
    @Test("max-age is read from Cache-Control", arguments: [
        ("public, max-age=19204, must-revalidate, no-transform", 19204),
        ("max-age=0", 0),
        ("MAX-AGE=60", 60),
        ("Max-Age=\"120\"", 120),
        ("s-maxage=100, max-age=50", 50),
        ("max-age=10, max-age=10", 10),
        ("max-age=99999999999999999999", Int(Int32.max)),
    ] as [(String, Int)])
    func maxAgeFound(header: String, seconds: Int) {
        #expect(JWKSDocument.maxAge(fromCacheControl: header) == .seconds(seconds))
    }

    @Test("absent, malformed or contradictory max-age gives nil", arguments: [
        "", "no-cache", "public, must-revalidate", "s-maxage=100", "max-age", "max-age=", "max-age=-1",
        "max-age=abc", "max-age=1.5", "max-age=10, max-age=20", "private=\"a, max-age=5\"", "max-age=\"\"",
    ])
    func maxAgeAbsent(header: String) {
        #expect(JWKSDocument.maxAge(fromCacheControl: header) == nil)
    }

    @Test("the file fetcher returns the file's bytes and the configured max-age, re-reading each time")
    func fileFetcher() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try jwks([("key-a", TestKeys.a)])
        try first.write(to: URL(fileURLWithPath: path))
        let fetcher = FileJWKSFetcher(path: path, maxAge: .seconds(300))
        let document = try await fetcher.fetchKeySet()
        #expect(document.json == first)
        #expect(document.maxAge == .seconds(300))

        let second = try jwks([("key-b", TestKeys.b)])
        try second.write(to: URL(fileURLWithPath: path))
        #expect(try await fetcher.fetchKeySet().json == second)
    }

    @Test("a missing file fails the fetch, which the cache reports as keys unavailable")
    func missingFile() async throws {
        let cache = GoogleKeyCache(fetcher: FileJWKSFetcher(path: "/nonexistent/storesync/jwks.json"))
        let error = await #expect(throws: PushTokenError.self) { try await cache.key(for: "key-a") }
        #expect(error?.code == .keysUnavailable)
    }
}
