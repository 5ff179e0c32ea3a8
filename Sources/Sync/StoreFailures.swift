import AppStore
import GooglePlay
import Mirror
import Queue

/// Turns what went wrong while handling a store notification into the queue's retry-or-dead-letter decision,
/// keeping the reason on-call will read in the dead letter.
enum StoreFailures {
    /// `TransactionIdNotFound` right after Apple itself signed the transaction is eventual consistency: a few
    /// tries before it counts as permanent.
    static let notFound = FailureStreak(name: "transaction not found", limit: 4, retryNote: "Apple may still be catching up",
                                        permanentNote: "Apple does not know the transaction it signed")
    /// A 401 after which the client dropped its token: a token Apple saw expire early (the host clock behind
    /// Apple's by more than the renewal margin) is replaced instead of dead-lettering every job in flight, while
    /// a wrong key still dead-letters with Apple's answer.
    static let unauthorized = FailureStreak(name: "401", limit: 3, retryNote: "next with a fresh token",
                                            permanentNote: "check the connection's key id, issuer id and private key")
    /// A TLS handshake that failed without a verdict on the certificate: about five minutes of tries with the
    /// default backoff (10 s doubling). A peer or middlebox dropping connections mid-handshake for a few minutes
    /// clears up within them, but libcurl reports a server that never can complete one (an https URL at a
    /// plain-HTTP port) the same way, and that should reach on-call with libcurl's reason within minutes, not
    /// after a day of retries.
    /// A push token signed with a key Google's published set does not hold. Google may have just published it
    /// (the key cache refetches for an unknown key at most once a minute), so it is tried again over about two
    /// minutes with the default backoff before it counts as forged; a forged push costs a few cheap attempts.
    static let unknownSigningKey = FailureStreak(name: "unknown signing key", limit: 5,
                                                 retryNote: "Google may have published it since the last key fetch",
                                                 permanentNote: "no key Google publishes signed the token")
    static let handshake = FailureStreak(name: "failed TLS handshake", limit: 6, retryNote: "the connection may have dropped",
                                         permanentNote: "check that the URL's host and port serve HTTPS")

    static func verification(_ error: AppStoreVerificationError) -> JobFailure {
        error.isRetryable ? .retryable("verification: \(error)") : .permanent("verification failed: \(error)")
    }

    static func mirror(_ error: MirrorError) -> JobFailure {
        error.code == .lineageBusy ? .retryable(error.message, retryAfter: .seconds(1)) : .permanent(error.message)
    }

    /// Runs a job's mirror writes, turning what the mirror refuses into the job's failure (`mirror(_:)`).
    static func mirroring(_ writes: () throws -> Void) throws {
        do {
            try writes()
        } catch let error as MirrorError {
            throw mirror(error)
        }
    }

    /// - Parameters:
    ///   - previous: the job's last error (`LeasedJob.lastError`), which bounds the failures retried only so
    ///     many times in a row.
    ///   - vouched: Apple itself signed the transaction asked about, so "not found" is eventual consistency.
    static func api(_ error: AppStoreAPIError, previous: String?, vouched: Bool) -> JobFailure {
        if error.code == .transactionNotFound && vouched { return notFound.decide(error.description, previous: previous) }
        if error.code == .unauthorized { return unauthorized.decide(error.description, previous: previous) }
        if error.code == .transport && error.transport == .tlsHandshake {
            return handshake.decide(error.description, previous: previous)
        }
        return error.isRetryable ? .retryable(error.description, retryAfter: error.retryAfter) : .permanent(error.description)
    }

    /// How long a job waits after Google refused the service account (401 with a fresh token, 403). Play Console
    /// permission grants take up to 24-48 hours to apply, and a purchase dead-lettered meanwhile is never
    /// mirrored or acknowledged, so Google refunds it after three days. Two hours apart, the default 25 attempts
    /// span about 48 hours (the normal backoff only about 31) without spending the connection's quota on a
    /// refusal that cannot clear within minutes; a fix takes effect within two hours. On-call hears of it at the
    /// first refusal (`GoogleStoreClients.Tools.failure` logs an error and counts it).
    static let permissionRetryInterval: Duration = .seconds(2 * 3600)

    /// 410 and 404 for a purchase token are permanent (Google forgot it, or it never existed); 401/403 (the
    /// service account lacks Play Console access, or is not granted it yet) retry every
    /// `permissionRetryInterval` with the Play Console hint; 429, 5xx and transport failures retry, failed TLS
    /// handshakes (with the API or the token endpoint) as `handshake` allows. `previous` is the job's last error.
    static func api(_ error: GooglePlayAPIError, previous: String?) -> JobFailure {
        if error.transport == .tlsHandshake { return handshake.decide(error.description, previous: previous) }
        if isPermissionDenied(error) {
            let hours = permissionRetryInterval.components.seconds / 3600
            return .retryable("\(error) (retried every \(hours) hours for up to about 2 days, as Play Console "
                              + "permissions can take that long to apply, then dead-lettered)",
                              retryAfter: permissionRetryInterval)
        }
        return error.isRetryable ? .retryable(error.description, retryAfter: error.retryAfter) : .permanent(error.description)
    }

    /// Whether Google refused the service account itself: nothing changes until someone grants it access.
    static func isPermissionDenied(_ error: GooglePlayAPIError) -> Bool {
        error.code == .unauthorized || error.code == .forbidden
    }
}
