import Foundation
import Postgres

/// A failure a job handler (or its writes) reports, saying whether trying again can help.
/// Any other error thrown by a handler counts as retryable: an unknown failure gets the benefit of the
/// doubt and dead-letters only once its attempts run out.
public struct JobFailure: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// Transient: a timeout, a 5xx, a 429, a lost connection.
        public static let retryable = Code("retryable")
        /// The job can never succeed as it is (bad input, missing configuration): dead-letter now.
        public static let permanent = Code("permanent")
    }

    public let code: Code
    public let message: String
    /// A wait the failing party asked for (`Retry-After`): the retry waits at least this long, and at least
    /// its backoff (see `RetryPolicy`), since it uses up an attempt either way.
    public let retryAfter: Duration?

    public static func retryable(_ message: String, retryAfter: Duration? = nil) -> JobFailure {
        JobFailure(code: .retryable, message: message, retryAfter: retryAfter)
    }

    public static func permanent(_ message: String) -> JobFailure {
        JobFailure(code: .permanent, message: message, retryAfter: nil)
    }

    public var description: String { message }
}

extension Finish.Result {
    /// What a failed attempt turns into: a dead letter when the failure is permanent or the attempts are
    /// used up, otherwise a retry after the policy's delay, which the queue adds to the database's clock.
    ///
    /// A transaction that lost a race (deadlock, serialization) succeeds when simply run again: it carries a
    /// 1 s hint, which the policy follows only for its first few retries, so a race that keeps recurring does
    /// not spend the attempts any faster than other failures.
    public static func after(_ error: any Error, attempt: Int, maxAttempts: Int, policy: RetryPolicy) -> Finish.Result {
        let failure = error as? JobFailure
        let message = failure?.message ?? String(describing: error)
        if failure?.code == .permanent {
            return .deadLetter(reason: message)
        }
        guard attempt < maxAttempts else {
            return .deadLetter(reason: "gave up after \(attempt) attempts; last error: \(message)")
        }
        let raced = (error as? PostgresError)?.code == .serializationFailure
        let hint = failure?.retryAfter ?? (raced ? .seconds(1) : nil)
        return .retry(error: message, after: policy.delay(afterAttempt: attempt, retryAfter: hint))
    }
}
