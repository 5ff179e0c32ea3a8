import Foundation
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
        PostgresQuery(upsert(from: "VALUES ($2::bigint, $3::text, now(), 1)"), [window, accountID, bucket]) { rows in
            Status(limit: limit, hits: try rows[0].decode(0), resetsIn: try rows[0].decode(1))
        }
    }

    /// The budget of app token `token`, charged one request only when the token is an active one of `host`'s
    /// account whose secret hashes to `secretSHA256`: the window's hits and seconds left, or nil (nothing
    /// charged). The pair is decided by the caller's constant-time comparison; this only keeps a wrong pair from
    /// spending the token's budget. The limit is the account's, which the caller learns in the same round trip.
    static func charge(appToken token: String, host: String,
                       secretSHA256: Data) -> PostgresQuery<(hits: Int, resetsIn: Int)?> {
        PostgresQuery(upsert(from: """
            SELECT t.account_id, 'app-token:' || t.token::text, now(), 1
            FROM account_tokens t JOIN accounts a ON a.id = t.account_id AND a.host = $3
            WHERE t.token = $2::uuid AND t.status = 'active' AND t.secret_sha256 = $4::bytea
            """), [window, token, host, secretSHA256]) { rows in
            try rows.first.map { (hits: try $0.decode(0), resetsIn: try $0.decode(1)) }
        }
    }

    /// The window's upsert of the rows `source` gives (account id, bucket, now, 1); `$1` is the window's length.
    private static func upsert(from source: String) -> String {
        """
        INSERT INTO api_rate_windows AS w (account_id, bucket, window_started_at, hits)
        \(source)
        ON CONFLICT (account_id, bucket) DO UPDATE SET
            window_started_at = CASE WHEN w.window_started_at <= now() - $1 * interval '1 second'
                                     THEN now() ELSE w.window_started_at END,
            hits = CASE WHEN w.window_started_at <= now() - $1 * interval '1 second'
                        THEN 1 ELSE least(w.hits + 1, 2000000000) END
        RETURNING hits, greatest(1, ceil(extract(epoch FROM w.window_started_at + $1 * interval '1 second' - now())))::int
        """
    }
}
