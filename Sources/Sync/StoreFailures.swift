import AppStore
import GooglePlay
import Mirror
import Queue

/// Turns what went wrong while handling a store notification into the queue's retry-or-dead-letter decision,
/// keeping the reason on-call will read in the dead letter.
enum StoreFailures {
    /// `TransactionIdNotFound` right after Apple itself signed the transaction is eventual consistency:
    /// this many attempts before it counts as permanent.
    static let notFoundAttempts = 4
    /// A 401 after which the client dropped its token: this many attempts, so a token Apple saw expire early
    /// (the host clock behind Apple's by more than the renewal margin) is replaced instead of dead-lettering
    /// every job in flight, while a wrong key still dead-letters with Apple's answer.
    static let unauthorizedAttempts = 3
    /// A TLS handshake that failed without a verdict on the certificate: this many attempts, about five minutes
    /// with the default backoff (10 s doubling). A peer or middlebox dropping connections mid-handshake for a
    /// few minutes clears up within them, but libcurl reports a server that never can complete one (an https
    /// URL at a plain-HTTP port) the same way, and that should reach on-call with libcurl's reason within
    /// minutes, not after a day of retries.
    static let handshakeAttempts = 6

    static func verification(_ error: AppStoreVerificationError) -> JobFailure {
        error.isRetryable ? .retryable("verification: \(error)") : .permanent("verification failed: \(error)")
    }

    static func mirror(_ error: MirrorError) -> JobFailure {
        error.code == .lineageBusy ? .retryable(error.message, retryAfter: .seconds(1)) : .permanent(error.message)
    }

    static func api(_ error: AppStoreAPIError, attempt: Int, vouched: Bool) -> JobFailure {
        if error.code == .transactionNotFound && vouched && attempt < notFoundAttempts {
            return .retryable("\(error) (attempt \(attempt) of \(notFoundAttempts) while Apple catches up)")
        }
        if error.code == .unauthorized && attempt < unauthorizedAttempts {
            return .retryable("\(error) (attempt \(attempt) of \(unauthorizedAttempts), next with a fresh token)")
        }
        if error.code == .transport && error.transport == .tlsHandshake {
            return handshake(error.description, attempt: attempt)
        }
        return error.isRetryable ? .retryable(error.description, retryAfter: error.retryAfter) : .permanent(error.description)
    }

    /// How long a job waits after Google refused the service account (401 with a fresh token, 403). Play Console
    /// permission grants take up to 24-48 hours to apply, and a purchase dead-lettered meanwhile is never
    /// mirrored or acknowledged, so Google refunds it after three days. Two hours apart, the default 25 attempts
    /// span about 48 hours (the normal backoff only about 31) without spending the connection's quota on a
    /// refusal that cannot clear within minutes; a fix takes effect within two hours. On-call hears of it at the
    /// first refusal (`GoogleConnectionRegistry.Tools.failure` logs an error and counts it).
    static let permissionRetryInterval: Duration = .seconds(2 * 3600)

    /// 410 and 404 for a purchase token are permanent (Google forgot it, or it never existed); 401/403 (the
    /// service account lacks Play Console access, or is not granted it yet) retry every
    /// `permissionRetryInterval` with the Play Console hint; 429, 5xx and transport failures retry, failed TLS
    /// handshakes (with the API or the token endpoint) `handshakeAttempts` times.
    static func api(_ error: GooglePlayAPIError, attempt: Int) -> JobFailure {
        if error.transport == .tlsHandshake { return handshake(error.description, attempt: attempt) }
        if isPermissionDenied(error) {
            return .retryable("\(error) (attempt \(attempt); retried every 2 hours for about 2 days, as Play Console "
                              + "permissions can take that long to apply, then dead-lettered)",
                              retryAfter: permissionRetryInterval)
        }
        return error.isRetryable ? .retryable(error.description, retryAfter: error.retryAfter) : .permanent(error.description)
    }

    /// Whether Google refused the service account itself: nothing changes until someone grants it access.
    static func isPermissionDenied(_ error: GooglePlayAPIError) -> Bool {
        error.code == .unauthorized || error.code == .forbidden
    }

    private static func handshake(_ description: String, attempt: Int) -> JobFailure {
        guard attempt >= handshakeAttempts else {
            return .retryable("\(description) (attempt \(attempt) of \(handshakeAttempts) for a failed TLS handshake)")
        }
        return .permanent("\(description) (the TLS handshake failed on attempt \(attempt) of \(handshakeAttempts); "
                          + "check that the URL's host and port serve HTTPS)")
    }
}
