import Accounts
import Foundation
import HTTP
import Logging
import Postgres
import Synchronization

/// Who a request's guards found it is from.
enum Caller: Sendable {
    case anyone
    case backend(APIPrincipal)
    case app(AppPrincipal)
}

/// One request to an endpoint, with what its guards established: the tenant's host, the path's parameters
/// and the caller whose budget the request spends (the account's REST budget for a backend, the token's for
/// an app).
final class APICall: Sendable {
    let request: HTTPRequest
    let host: String
    let parameters: [String: String]
    let caller: Caller
    /// An app route's read, answered with its authentication.
    let prefetched: JSONValue?
    private let pool: PostgresPool
    private let rate: Mutex<RateLimiter.Status?>

    init(request: HTTPRequest, host: String, parameters: [String: String], caller: Caller, pool: PostgresPool) {
        self.request = request
        self.host = host
        self.parameters = parameters
        self.caller = caller
        self.pool = pool
        rate = Mutex(nil)
        prefetched = nil
    }

    /// An app's request, its token charged and its route's read answered by the authentication.
    init(request: HTTPRequest, host: String, parameters: [String: String], app: AppAuthentication, pool: PostgresPool) {
        self.request = request
        self.host = host
        self.parameters = parameters
        caller = .app(app.principal)
        self.pool = pool
        rate = Mutex(app.rate)
        prefetched = app.read
    }

    /// The backend's principal; only backend routes have one.
    var principal: APIPrincipal {
        guard case .backend(let principal) = caller else { preconditionFailure("a route not for backends asked for a principal") }
        return principal
    }

    /// The app's principal; only app routes have one.
    var app: AppPrincipal {
        guard case .app(let principal) = caller else { preconditionFailure("a route not for apps asked for an app principal") }
        return principal
    }

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

    /// The REST budget's charge alone, before an endpoint's writes.
    func charge() async throws {
        try record(try await pool.query(chargeQuery))
    }

    /// The account's REST budget: app requests are charged by their authentication.
    private var chargeQuery: PostgresQuery<RateLimiter.Status> {
        RateLimiter.charge(accountID: principal.accountID, bucket: "rest", limit: principal.rateLimit)
    }

    private func record(_ status: RateLimiter.Status) throws {
        rate.withLock { $0 = status }
        if status.isLimited { throw APIError.tooManyAttempts }
    }
}
