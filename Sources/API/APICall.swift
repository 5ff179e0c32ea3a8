import Accounts
import Foundation
import HTTP
import Postgres
import Synchronization

/// One request to an endpoint, with what its guards established: the tenant's host, the path's parameters
/// and, on backend routes, the principal whose account's budget the request spends.
final class APICall: Sendable {
    let request: HTTPRequest
    let host: String
    let parameters: [String: String]
    private let backend: APIPrincipal?
    private let pool: PostgresPool
    private let rate = Mutex<RateLimiter.Status?>(nil)

    init(request: HTTPRequest, host: String, parameters: [String: String], principal: APIPrincipal?, pool: PostgresPool) {
        self.request = request
        self.host = host
        self.parameters = parameters
        backend = principal
        self.pool = pool
    }

    /// The backend's principal; only backend routes have one.
    var principal: APIPrincipal {
        guard let backend else { preconditionFailure("an open route asked for a principal") }
        return backend
    }

    /// The principal where the route has one.
    var principalIfAny: APIPrincipal? { backend }

    /// The budget's state once charged, for the answer's headers.
    var rateStatus: RateLimiter.Status? { rate.withLock { $0 } }

    /// The account's REST budget, charged this request, and two reads in the same round trip. Throws the 429
    /// when the budget is spent (the reads' answers are then dropped). The charge goes last: a pipeline runs
    /// as one implicit transaction, so the account's budget row stays locked from the upsert to the commit,
    /// and every request of the account would otherwise queue behind the others' reads.
    func charged<First: Sendable, Second: Sendable>(_ first: PostgresQuery<First>,
                                                    _ second: PostgresQuery<Second>) async throws -> (First, Second) {
        let charge = chargeQuery
        let (a, b, status) = try await pool.run { db in try db.query(first, second, charge) }
        try record(status)
        return (a, b)
    }

    /// The charge alone, before an endpoint's writes.
    func charge() async throws {
        try record(try await pool.query(chargeQuery))
    }

    private var chargeQuery: PostgresQuery<RateLimiter.Status> {
        RateLimiter.charge(accountID: principal.accountID, bucket: "rest", limit: principal.rateLimit)
    }

    private func record(_ status: RateLimiter.Status) throws {
        rate.withLock { $0 = status }
        if status.isLimited { throw APIError.bare(429, "Too Many Attempts.") }
    }
}
