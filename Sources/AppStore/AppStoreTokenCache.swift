import Foundation

/// The bearer token one store connection sends, signed once and reused until shortly before it expires:
/// one ECDSA signature per lifetime instead of one per request, shared by every concurrent caller.
actor AppStoreTokenCache {
    private let signer: AppStoreAPIToken
    private let lifetime: Duration
    private let renewalMargin: Duration
    private let now: @Sendable () -> Date
    private var current: (token: String, renewAt: Date)?

    /// - Precondition: `renewalMargin < lifetime <= AppStoreAPIToken.maximumLifetime` (checked by the client).
    init(signer: AppStoreAPIToken, lifetime: Duration, renewalMargin: Duration, now: @escaping @Sendable () -> Date) {
        self.signer = signer
        self.lifetime = lifetime
        self.renewalMargin = renewalMargin
        self.now = now
    }

    /// The current token, signing a new one when there is none or it is within the renewal margin of `exp`.
    func token() throws(AppStoreAPIError) -> String {
        let now = now()
        if let current, now < current.renewAt { return current.token }
        // `exp` counts from `iat`, which the token rounds down to whole seconds.
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let token: String
        do {
            token = try signer.make(issuedAt: issuedAt, lifetime: lifetime)
        } catch {
            throw AppStoreAPIError(.tokenSigning, "signing the App Store API token failed: \(error)")
        }
        let renewAt = issuedAt.addingTimeInterval((lifetime - renewalMargin).timeInterval)
        current = (token, renewAt)
        return token
    }

    /// Drops `token` after Apple refused it, so the next request signs a fresh one (a token issued while
    /// the host clock was off stays refused until it expires otherwise).
    func discard(_ token: String) {
        if current?.token == token { current = nil }
    }
}
