import HTTP

/// The Play Developer API endpoints the client calls, by the quota bucket Google counts them in, plus the OAuth
/// token endpoint (which has no published quota and is never paced); what the observer reports.
public enum GooglePlayEndpointFamily: String, Sendable, Hashable, CaseIterable {
    /// `purchases.subscriptionsv2.get` (Google's "Subscriptions" bucket).
    case subscriptions
    /// `orders.get` ("Orders").
    case orders
    /// `purchases.subscriptions.acknowledge` (counted with "Subscription updates").
    case subscriptionUpdates = "subscription_updates"
    /// `purchases.voidedpurchases.list`, which has its own, much smaller quota.
    case voidedPurchases = "voided_purchases"
    /// The OAuth 2.0 token endpoint.
    case accessToken = "access_token"
}

/// Requests per minute one store connection may send, per Google quota bucket. Google counts each bucket per
/// minute (3,000 queries by default); pacing continuously keeps a burst of notifications from spending a minute's
/// quota in seconds. The limit is per client (per worker process): with several processes per app, scale it.
public struct GooglePlayRateLimits: Sendable, Equatable {
    /// The pacing of one bucket.
    public struct Limit: Sendable, Equatable {
        /// The sustained rate.
        public var perMinute: Int
        /// Requests allowed at once after an idle spell. Any minute then carries at most `perMinute + burst`.
        public var burst: Int

        public init(perMinute: Int, burst: Int) {
            self.perMinute = perMinute
            self.burst = burst
        }

        /// `share` of Google's `quota` per minute, the rest of the quota as burst: no minute can exceed the quota.
        public static func share(_ share: Double, of quota: Int) -> Limit {
            let perMinute = max(1, Int((Double(quota) * share).rounded()))
            return Limit(perMinute: perMinute, burst: max(1, quota - perMinute))
        }
    }

    /// Google's default quota per minute for each of the subscriptions, orders and subscription-update buckets.
    public static let defaultQuotaPerMinute = 3000
    /// The share of a quota used by default: the rest is headroom for bursts, clock drift between this host's
    /// minute and Google's, and an operator's manual calls.
    public static let defaultShare = 0.9

    public var subscriptions: Limit
    public var orders: Limit
    public var subscriptionUpdates: Limit
    /// Google allows 30 voided-purchases queries in any 30 seconds (and 6,000 a day, which the caller's polling
    /// interval keeps to).
    public var voidedPurchases: Limit
    /// A request whose slot is further away than this fails at once as `.rateLimited` (retryable), so a backlog
    /// turns into rescheduled jobs instead of tasks holding worker slots while they wait.
    public var maximumWait: Duration

    public init(subscriptions: Limit, orders: Limit, subscriptionUpdates: Limit, voidedPurchases: Limit,
                maximumWait: Duration = .seconds(30)) {
        self.subscriptions = subscriptions
        self.orders = orders
        self.subscriptionUpdates = subscriptionUpdates
        self.voidedPurchases = voidedPurchases
        self.maximumWait = maximumWait
    }

    /// Google's default quotas with `defaultShare` of each: 2,700 a minute plus a burst of 300 per 3,000 bucket,
    /// and 54 a minute without burst for voided purchases (at most 28 in any 30 seconds).
    public static let google = GooglePlayRateLimits(
        subscriptions: .share(defaultShare, of: defaultQuotaPerMinute), orders: .share(defaultShare, of: defaultQuotaPerMinute),
        subscriptionUpdates: .share(defaultShare, of: defaultQuotaPerMinute),
        voidedPurchases: Limit(perMinute: Int(60 * defaultShare), burst: 1))

    /// The limit of `family`; `nil` for the token endpoint, which is not paced.
    public subscript(family: GooglePlayEndpointFamily) -> Limit? {
        switch family {
        case .subscriptions: subscriptions
        case .orders: orders
        case .subscriptionUpdates: subscriptionUpdates
        case .voidedPurchases: voidedPurchases
        case .accessToken: nil
        }
    }

    /// These limits times `share` (one of several worker processes), at least one request a minute and a burst
    /// of one each.
    public func scaled(by share: Double) -> GooglePlayRateLimits {
        func scale(_ limit: Limit) -> Limit {
            Limit(perMinute: max(1, Int((Double(limit.perMinute) * share).rounded(.down))),
                  burst: max(1, Int((Double(limit.burst) * share).rounded(.down))))
        }
        return GooglePlayRateLimits(subscriptions: scale(subscriptions), orders: scale(orders),
                                    subscriptionUpdates: scale(subscriptionUpdates), voidedPurchases: scale(voidedPurchases),
                                    maximumWait: maximumWait)
    }
}

/// One pacer per quota bucket of one store connection. An actor so that any number of concurrent jobs reserve
/// slots without a lock; the waiting happens outside it, on the clock, never on a thread.
actor GooglePlayRateLimiter {
    private var pacers: [GooglePlayEndpointFamily: TokenBucket] = [:]

    /// - Precondition: every limit is positive (`GooglePlayAPIClient` checks before creating one).
    init(_ limits: GooglePlayRateLimits) {
        for family in GooglePlayEndpointFamily.allCases {
            if let limit = limits[family] {
                pacers[family] = TokenBucket(perMinute: limit.perMinute, burst: limit.burst, maximumWait: limits.maximumWait)
            }
        }
    }

    /// Waits for a slot of `family`. Throws `.rateLimited` when the slot is beyond the maximum wait, and
    /// `CancellationError` when the task is cancelled while waiting (the slot is then lost, which only makes the
    /// pacing more conservative).
    nonisolated func acquire(_ family: GooglePlayEndpointFamily) async throws {
        switch await reserve(family) {
        case .at(let instant):
            if instant > .now { try await Task.sleep(until: instant, clock: .continuous) }
        case .refused(let wait):
            throw GooglePlayAPIError(.rateLimited, "the connection's \(family.rawValue) rate limit has no free slot within "
                                     + "the configured maximum wait (next in \(wait))", retryAfter: wait)
        }
    }

    private func reserve(_ family: GooglePlayEndpointFamily) -> TokenBucket.Reservation {
        let now = ContinuousClock.now
        guard var pacer = pacers[family] else { return .at(now) }
        let reservation = pacer.reserve(now: now)
        pacers[family] = pacer
        return reservation
    }
}
