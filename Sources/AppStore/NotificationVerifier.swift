import Crypto
import Foundation
import Synchronization

/// Verifies the notifications of one App Store connection in either real environment: Apple sends a
/// connection's webhook URL both Production and Sandbox notifications, and both must be proven genuine —
/// the connection's own to be mirrored, the other's to be recorded as a mismatch — before anything is
/// believed. Shared by ingest (which refuses forgeries at receipt) and the worker (which checks again, since
/// a root or setting can change between the two).
public final class NotificationVerifier: Sendable {
    /// The connection's own environment's verifier; it also checks what the App Store Server API answers.
    public let own: SignedDataVerifier
    private let roots: [Certificate]
    private let appAppleID: Int64?
    /// The other real environment's verifier. Its App Apple ID comes from the notification's claims (a
    /// connection knows its own only for its own environment), so it is kept only once a notification verified
    /// with it: a forged payload cannot plant one, and a different claim builds a new one instead of failing
    /// genuine notifications.
    private let other = Mutex<SignedDataVerifier?>(nil)

    /// - Throws: `AppStoreVerificationError` for settings the verifier cannot work with (a Production
    ///   connection without its App Apple ID).
    public init(roots: [Certificate], bundleID: String, appAppleID: Int64?, environment: AppStoreEnvironment) throws {
        own = try SignedDataVerifier(roots: roots, bundleID: bundleID, appAppleID: appAppleID, environment: environment)
        self.roots = roots
        self.appAppleID = appAppleID
    }

    /// Verifies a notification with the verifier of the environment it claims — only Production or Sandbox;
    /// any other name goes to the connection's own verifier, which refuses it.
    public func verify(_ jws: String, claims: NotificationRouting, now: Date = Date()) throws -> NotificationPayload {
        guard let claimed = claims.environment, claimed != own.environment,
              claimed == .production || claimed == .sandbox else {
            return try own.verifyNotification(jws, now: now)
        }
        let claimedAppID = claimed == .production ? (appAppleID ?? claims.appAppleID) : appAppleID
        if let kept = other.withLock({ $0 }), kept.environment == claimed, kept.appAppleID == claimedAppID {
            return try kept.verifyNotification(jws, now: now)
        }
        let candidate = try SignedDataVerifier(roots: roots, bundleID: own.bundleID, appAppleID: claimedAppID,
                                               environment: claimed)
        let payload = try candidate.verifyNotification(jws, now: now)
        other.withLock { $0 = candidate }
        return payload
    }
}
