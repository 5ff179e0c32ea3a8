import HTTP
import StoreModel

/// The groups of App Store Server API endpoints Apple rate-limits separately.
public enum AppStoreEndpointFamily: String, Sendable, Hashable, CaseIterable {
    case subscriptionStatuses = "statuses"
    case transactionHistory = "history"
    case consumption
    case notificationHistory = "notification-history"
}

/// Requests per second one store connection may send, per endpoint family. Apple enforces its limits per
/// app and hour; pacing every second keeps bursts of notifications from spending the hour's budget in
/// minutes. The limit is per client (per worker process): with several processes per app, divide it.
public struct AppStoreRateLimits: Sendable, Equatable {
    public struct Limit: Sendable, Equatable {
        public var perSecond: Int
        /// Requests allowed at once after an idle second; Apple counts per second, so one second's worth.
        public var burst: Int

        public init(perSecond: Int, burst: Int? = nil) {
            self.perSecond = perSecond
            self.burst = burst ?? perSecond
        }
    }

    public var subscriptionStatuses: Limit
    public var transactionHistory: Limit
    public var consumption: Limit
    public var notificationHistory: Limit
    /// A request whose slot is further away than this fails at once as `.rateLimited` (retryable), so a
    /// backlog turns into rescheduled jobs instead of tasks holding worker slots while they wait.
    public var maximumWait: Duration

    /// `notificationHistory` defaults to the statuses limit (Apple publishes the same 50/s for both).
    public init(subscriptionStatuses: Limit, transactionHistory: Limit, consumption: Limit,
                notificationHistory: Limit? = nil, maximumWait: Duration = .seconds(30)) {
        self.subscriptionStatuses = subscriptionStatuses
        self.transactionHistory = transactionHistory
        self.consumption = consumption
        self.notificationHistory = notificationHistory ?? subscriptionStatuses
        self.maximumWait = maximumWait
    }

    /// Apple's published limits: 50 requests per second for each of these endpoints in Production, 10 % of
    /// that in Sandbox.
    public static func apple(_ environment: StoreEnvironment) -> AppStoreRateLimits {
        let perSecond = environment == .production ? 50 : 5
        return AppStoreRateLimits(subscriptionStatuses: Limit(perSecond: perSecond),
                                  transactionHistory: Limit(perSecond: perSecond), consumption: Limit(perSecond: perSecond))
    }

    public subscript(family: AppStoreEndpointFamily) -> Limit {
        switch family {
        case .subscriptionStatuses: subscriptionStatuses
        case .transactionHistory: transactionHistory
        case .consumption: consumption
        case .notificationHistory: notificationHistory
        }
    }
}

/// One token bucket per endpoint family of one store connection. An actor so that any number of concurrent
/// jobs reserve slots without a lock; the waiting happens outside it, on the clock, never on a thread.
actor AppStoreRateLimiter {
    private var statuses: TokenBucket
    private var history: TokenBucket
    private var consumption: TokenBucket
    private var notificationHistory: TokenBucket

    /// - Precondition: every limit is positive (`AppStoreAPIClient` checks before creating one).
    init(_ limits: AppStoreRateLimits) {
        func bucket(_ limit: AppStoreRateLimits.Limit) -> TokenBucket {
            TokenBucket(perSecond: limit.perSecond, burst: limit.burst, maximumWait: limits.maximumWait)
        }
        statuses = bucket(limits.subscriptionStatuses)
        history = bucket(limits.transactionHistory)
        consumption = bucket(limits.consumption)
        notificationHistory = bucket(limits.notificationHistory)
    }

    /// Waits for a slot of `family`. Throws `.rateLimited` when the slot is beyond the bucket's maximum
    /// wait, and `CancellationError` when the task is cancelled while waiting (the slot is then lost, which
    /// only makes the pacing more conservative).
    nonisolated func acquire(_ family: AppStoreEndpointFamily) async throws {
        switch await reserve(family) {
        case .at(let instant):
            if instant > .now { try await Task.sleep(until: instant, clock: .continuous) }
        case .refused(let wait):
            throw AppStoreAPIError(.rateLimited, "the connection's \(family.rawValue) rate limit has no free slot "
                                   + "within the configured maximum wait (next in \(wait))", retryAfter: wait)
        }
    }

    private func reserve(_ family: AppStoreEndpointFamily) -> TokenBucket.Reservation {
        let now = ContinuousClock.now
        switch family {
        case .subscriptionStatuses: return statuses.reserve(now: now)
        case .transactionHistory: return history.reserve(now: now)
        case .consumption: return consumption.reserve(now: now)
        case .notificationHistory: return notificationHistory.reserve(now: now)
        }
    }
}
