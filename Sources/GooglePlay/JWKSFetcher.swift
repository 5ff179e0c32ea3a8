import Crypto
import Foundation

/// A JSON Web Key Set as fetched, with how long its publisher says it stays fresh.
public struct JWKSDocument: Sendable {
    /// The JWKS JSON, parsed only by the key cache so every fetcher is held to the same limits.
    public let json: Data
    /// The `Cache-Control: max-age` the publisher sent; `nil` leaves the lifetime to the cache's default.
    public let maxAge: Duration?

    public init(json: Data, maxAge: Duration? = nil) {
        self.json = json
        self.maxAge = maxAge
    }

    /// Reads `max-age` from a `Cache-Control` value (RFC 9111 §5.2), so an HTTP-backed fetcher honours
    /// Google's key rotation schedule. Directive names are case-insensitive and the value may be quoted;
    /// values beyond 2³¹ seconds are capped as §1.2.2 asks. A malformed or contradictory `max-age` gives
    /// `nil`, meaning "no usable freshness information", rather than a guess.
    public static func maxAge(fromCacheControl header: String) -> Duration? {
        var found: Int64?
        for directive in directives(header) {
            let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "max-age" else { continue }
            guard parts.count == 2 else { return nil }
            var value = parts[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return nil
            }
            let seconds = min(Int64(value) ?? Int64(Int32.max), Int64(Int32.max))
            if let found, found != seconds { return nil }
            found = seconds
        }
        return found.map { .seconds($0) }
    }

    /// Splits a header value at commas outside quoted strings, so a quoted argument of another directive
    /// cannot smuggle in a `max-age`.
    private static func directives(_ header: String) -> [String] {
        var result: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in header {
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == "," && !quoted {
                result.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        result.append(current)
        return result
    }
}

/// Where the key cache gets Google's signing keys. Injected so this module never depends on an HTTP client,
/// and so the CLI and tests can serve keys from a file or a script.
public protocol JWKSFetcher: Sendable {
    /// Fetches the current key set. Any error thrown makes the verification that needed the keys fail with
    /// the retryable `keysUnavailable`.
    func fetchKeySet() async throws -> JWKSDocument
}

/// Serves a JWKS from a local file, re-reading it on every fetch so an operator can rotate keys in place:
/// for running against a simulator, and for tests.
public struct FileJWKSFetcher: JWKSFetcher {
    public let path: String
    public let maxAge: Duration?

    public init(path: String, maxAge: Duration? = nil) {
        self.path = path
        self.maxAge = maxAge
    }

    /// Reads at most one byte more than a JWKS may hold, so a wrong path to a huge file is refused by the
    /// cache's size check instead of being loaded whole.
    public func fetchKeySet() async throws -> JWKSDocument {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let json = try handle.read(upToCount: JSONWebKeySet.maxLength + 1) ?? Data()
        return JWKSDocument(json: json, maxAge: maxAge)
    }
}
