import Queue

/// A failure that may clear by itself but must not be retried for ever — Apple not yet knowing a transaction it
/// signed, a 401 before the token is replaced, a failed TLS handshake — is bounded by how often it happened
/// in a row, not by the job's attempt number: other failures (an outage's 5xx, a lapsed lease) count as
/// attempts too, and must not use up its budget. The count rides in the retry's message, which the queue keeps
/// as the job's last error (`LeasedJob.lastError`); any other last error, a dead letter's reason included,
/// starts it over.
struct FailureStreak: Sendable {
    /// How the failure is named in messages, e.g. `failed TLS handshake`.
    let name: String
    /// Failures in a row after which it is permanent.
    let limit: Int
    /// Appended to the retry's note: what the next attempt hopes for.
    let retryNote: String
    /// Appended to the dead letter's note: what on-call should check.
    let permanentNote: String

    /// The decision for one more such failure after `previous` (the job's last error): retryable while the run
    /// stays under `limit`, then permanent. `description` is the failure itself and leads both messages.
    func decide(_ description: String, previous: String?) -> JobFailure {
        let count = run(before: previous) + 1
        if count < limit {
            return .retryable("\(description) (\(name) \(count) in a row, at most \(limit); \(retryNote))")
        }
        return .permanent("\(description) (\(name) \(count) times in a row; \(permanentNote))")
    }

    /// How many of these failures in a row ended with `previous`: the count its retry note carries, else 0.
    func run(before previous: String?) -> Int {
        guard let previous, let marker = previous.range(of: "(\(name) ", options: .backwards) else { return 0 }
        let rest = previous[marker.upperBound...]
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 4, rest.dropFirst(digits.count).hasPrefix(" in a row, at most ") else { return 0 }
        return Int(digits) ?? 0
    }
}
