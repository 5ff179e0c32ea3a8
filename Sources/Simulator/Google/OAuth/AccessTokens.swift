import Crypto
import Foundation
import HTTP

/// The access tokens the token endpoint issued, each valid until its wall-clock expiry: StoreSync's OAuth
/// client caches them with its own clock, so they live on the wall clock, not the simulated one.
final class AccessTokens: Sendable {
    /// Issued tokens kept at most; expired ones are dropped first.
    static let capacity = 10_000

    private struct Issued: Sendable {
        var expiries: [String: Date] = [:]
        var issuedCount = 0
    }

    private let issued = Locked(Issued())

    /// A new random token (`ya29.` like Google's) valid for `lifetime` from `now`.
    func issue(lifetime: Duration, now: Date = Date()) -> String {
        var generator = SystemRandomNumberGenerator()
        let token = "ya29." + Base64URL.encode((0..<48).map { _ in UInt8.random(in: 0...255, using: &generator) })
        issued.withLock { issued in
            if issued.expiries.count >= Self.capacity {
                issued.expiries = issued.expiries.filter { $0.value > now }
                if issued.expiries.count >= Self.capacity, let oldest = issued.expiries.min(by: { $0.value < $1.value }) {
                    issued.expiries[oldest.key] = nil
                }
            }
            issued.expiries[token] = now.addingTimeInterval(Double(lifetime.wholeMilliseconds) / 1000)
            issued.issuedCount += 1
        }
        return token
    }

    /// Why `authorization` (an `Authorization` header value) is not a live access token, or `nil` when it is.
    func refusal(_ authorization: String?, now: Date = Date()) -> String? {
        guard let authorization else { return "no Authorization header" }
        guard authorization.utf8.count <= 4096, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            return "Authorization is not a Bearer token"
        }
        let token = authorization.dropFirst(7).trimmingHTTPWhitespace
        guard let expiry = issued.withLock({ $0.expiries[token] }) else { return "the access token was not issued here" }
        guard expiry > now else { return "the access token expired at \(expiry)" }
        return nil
    }

    /// Ends every token issued so far, as a revoked key or an expiry would.
    func expireAll() {
        issued.withLock { $0.expiries = [:] }
    }

    var issuedCount: Int { issued.withLock { $0.issuedCount } }
}
