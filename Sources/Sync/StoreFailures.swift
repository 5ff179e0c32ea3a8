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

    /// 410 and 404 for a purchase token are permanent (Google forgot it, or it never existed), as are 401/403
    /// (the service account lacks Play Console access); 429, 5xx and transport failures retry, failed TLS
    /// handshakes (with the API or the token endpoint) `handshakeAttempts` times.
    static func api(_ error: GooglePlayAPIError, attempt: Int) -> JobFailure {
        if error.transport == .tlsHandshake { return handshake(error.description, attempt: attempt) }
        return error.isRetryable ? .retryable(error.description, retryAfter: error.retryAfter) : .permanent(error.description)
    }

    private static func handshake(_ description: String, attempt: Int) -> JobFailure {
        guard attempt >= handshakeAttempts else {
            return .retryable("\(description) (attempt \(attempt) of \(handshakeAttempts) for a failed TLS handshake)")
        }
        return .permanent("\(description) (the TLS handshake failed on attempt \(attempt) of \(handshakeAttempts); "
                          + "check that the URL's host and port serve HTTPS)")
    }
}
