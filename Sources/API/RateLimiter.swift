import Postgres

/// An account's request budget per minute, counted in PostgreSQL so that every process serving the API
/// spends the same one: several `serve` processes behind a load balancer must not multiply it.
///
/// A window opens with an account's first request and lasts 60 seconds (Laravel's throttle, whose headers
/// the reference's clients know); each request is one upsert of an unlogged row, sent in the same round trip
/// as the endpoint's first read where it has one. A limited request still counts, so a client hammering
/// through its 429s stays limited until the window ends.
enum RateLimiter {
    static let window = 60

    struct Status: Sendable, Equatable {
        let limit: Int
        let hits: Int
        /// Seconds until the window ends, at least 1.
        let resetsIn: Int

        var remaining: Int { max(0, limit - hits) }
        var isLimited: Bool { hits > limit }

        /// What every answer carries once the account is known.
        var headers: [(name: String, value: String)] {
            var headers = [("x-ratelimit-limit", String(limit)), ("x-ratelimit-remaining", String(remaining))]
            if isLimited { headers.append(("retry-after", String(resetsIn))) }
            return headers
        }
    }

    /// The budget `bucket` of `accountID`, charged one request.
    static func charge(accountID: Int64, bucket: String, limit: Int) -> PostgresQuery<Status> {
        PostgresQuery("""
            INSERT INTO api_rate_windows AS w (account_id, bucket, window_started_at, hits)
            VALUES ($1, $2, now(), 1)
            ON CONFLICT (account_id, bucket) DO UPDATE SET
                window_started_at = CASE WHEN w.window_started_at <= now() - $3 * interval '1 second'
                                         THEN now() ELSE w.window_started_at END,
                hits = CASE WHEN w.window_started_at <= now() - $3 * interval '1 second'
                            THEN 1 ELSE least(w.hits + 1, 2000000000) END
            RETURNING hits, greatest(1, ceil(extract(epoch FROM w.window_started_at + $3 * interval '1 second' - now())))::int
            """, [accountID, bucket, window]) { rows in
            Status(limit: limit, hits: try rows[0].decode(0), resetsIn: try rows[0].decode(1))
        }
    }
}
