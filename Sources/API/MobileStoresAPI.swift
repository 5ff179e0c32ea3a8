import Accounts
import Foundation
import HTTP
import Logging
import Metrics
import Postgres
import Sync

/// The Mobile Stores API a SubscriptionFlow customer's backend and apps call on its tenant host: the token
/// endpoint at the root and the endpoints under `/api/v1/mobile-stores`. A thin face: each request is parsed,
/// authenticated (a backend's bearer token, an app's account token pair), charged to its budget (the
/// account's REST budget, the token's own), handed to the domain (`AccountTokens`, `PurchaseRegistrar`,
/// `Entitlement`, `ConsumptionUsage`) and rendered. Every answer is JSON in the
/// reference's shapes, including the refusals of paths and methods it does not know.
public final class MobileStoresAPI: Sendable {
    public static let prefix = "/api/v1/mobile-stores"
    public static let tokenPath = "/oauth/token"

    private let router: APIRouter
    private let pool: PostgresPool
    private let authenticator: BearerAuthenticator
    private let appAuthenticator: AppAuthenticator
    private let accepting: Locked<Bool>
    private let requests: Counter
    private let latency: Histogram
    private let logger = Logger(component: "api")

    /// - Parameters:
    ///   - pool: connections as a member of `storesync_api`.
    ///   - registrar: the store clients purchase registration asks.
    ///   - tokenLifetime: how long an access token from `/oauth/token` lives.
    ///   - clientAddresses: which address an app request is from, for its failure budget.
    ///   - accepting: whether requests are served from the start; `false` answers 503 until `open()`, for a
    ///     process that listens before its database is there.
    public init(pool: PostgresPool, registrar: PurchaseRegistrar, metrics: MetricsRegistry,
                tokenLifetime: Duration = APIAccessTokens.defaultLifetime,
                clientAddresses: ClientAddressRule = ClientAddressRule(), accepting: Bool = true) {
        self.pool = pool
        authenticator = BearerAuthenticator(pool: pool)
        appAuthenticator = AppAuthenticator(pool: pool, clientAddresses: clientAddresses)
        self.accepting = Locked(accepting)
        requests = metrics.counter("storesync_api_requests_total", help: "Mobile Stores API requests by route and status.",
                                   labels: ["route", "status"])
        latency = metrics.histogram("storesync_api_duration_seconds", help: "Time to answer a Mobile Stores API request.",
                                    labels: ["route"])
        router = APIRouter(routes: Self.routes(pool: pool, registrar: registrar, tokenLifetime: tokenLifetime))
    }

    private static func routes(pool: PostgresPool, registrar: PurchaseRegistrar, tokenLifetime: Duration) -> [APIRoute] {
        let oauth = OAuthTokenEndpoint(pool: pool, lifetime: tokenLifetime)
        return [
            APIRoute(method: "POST", pattern: tokenPath, access: .open) { await oauth.answer($0) },
            APIRoute(method: "GET", pattern: prefix + "/openapi.json", access: .open) { _ in OpenAPIDocument.answer },
            APIRoute(method: "POST", pattern: prefix + "/account-tokens", access: .backend) {
                try await AccountTokenEndpoints.issue($0, pool: pool)
            },
            APIRoute(method: "DELETE", pattern: prefix + "/account-tokens/{accountToken}", access: .backend) {
                try await AccountTokenEndpoints.revoke($0, pool: pool)
            },
            APIRoute(method: "POST", pattern: prefix + "/purchases", access: .backend) {
                try await PurchaseEndpoints.register($0, pool: pool, registrar: registrar)
            },
            APIRoute(method: "GET", pattern: prefix + "/customers/{customer}/entitlements", access: .backend) {
                try await EntitlementEndpoints.read($0)
            },
            APIRoute(method: "POST", pattern: prefix + "/client/purchases", access: .app(read: nil)) {
                try await ClientEndpoints.report($0, pool: pool, registrar: registrar)
            },
            APIRoute(method: "GET", pattern: prefix + "/client/entitlements", access: .app(read: ClientEndpoints.entitlementsRead)) {
                ClientEndpoints.entitlements($0)
            },
            APIRoute(method: "PUT", pattern: prefix + "/customers/{customer}/consumption-usage/{transactionId}",
                     access: .backend) { try await ConsumptionUsageEndpoints.record($0, pool: pool) },
            APIRoute(method: "GET", pattern: prefix + "/customers/{customer}/consumption-usage/{transactionId}",
                     access: .backend) { try await ConsumptionUsageEndpoints.read($0, pool: pool) },
        ]
    }

    /// Every routed endpoint as `METHOD pattern`, for the test that holds the published document to them.
    public var endpoints: [String] { router.routes.map { "\($0.method) \($0.pattern)" } }

    /// Starts serving (see `init`'s `accepting`).
    public func open() { accepting.withLock { $0 = true } }

    /// Claims the token path and every path under the prefix, for every method: no other layer answers them.
    public func install(into server: inout HTTPRouter) {
        server.route("*", Self.tokenPath) { request in await self.handle(request) }
        server.route("*", prefix: Self.prefix + "/") { request in await self.handle(request) }
    }

    /// Whether `path` is the API's, so the server's own refusals of it (413, 431, 408) take the API's shape.
    public static func owns(_ path: String?) -> Bool {
        guard let path else { return false }
        return path == tokenPath || path == prefix || path.hasPrefix(prefix + "/")
    }

    /// A refusal the server answers itself, in the API's shape.
    public static func refusal(status: Int, message: String) -> HTTPResponse {
        let sentence = message.prefix(1).uppercased() + message.dropFirst() + "."
        return APIError(status, sentence).response
    }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let started = ContinuousClock.now
        var label = "unmatched"
        var response: HTTPResponse
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            response = APIError(404, "Not found.").response
        case .methodNotAllowed(let allowed):
            response = APIError(405, "Method not allowed.", headers: [("allow", allowed.joined(separator: ", "))]).response
        case .route(let route, let parameters):
            label = route.pattern
            response = await answer(request, route: route, parameters: parameters)
        }
        requests.increment(label, String(response.status))
        latency.observe(ContinuousClock.now - started, label)
        return response
    }

    private func answer(_ request: HTTPRequest, route: APIRoute, parameters: [String: String]) async -> HTTPResponse {
        guard accepting.withLock({ $0 }) else {
            return APIError(503, "Starting: waiting for the database.", headers: [("retry-after", "1")]).response
        }
        guard let host = HostName.fromHeader(request.header("host")) else {
            return APIError(400, "The Host header is missing or malformed.").response
        }
        var call: APICall?
        let result: Result<APIAnswer, any Error>
        do {
            let made: APICall
            switch route.access {
            case .open:
                made = APICall(request: request, host: host, parameters: parameters, caller: .anyone, pool: pool)
            case .backend:
                let found = try await authenticator.authenticate(request, host: host)
                guard found.scopes.contains(APIClients.defaultScope) else { throw APIError.invalidScope }
                made = APICall(request: request, host: host, parameters: parameters, caller: .backend(found), pool: pool)
            case .app(let read):
                let authenticated = try await appAuthenticator.authenticate(request, host: host, read: read)
                made = APICall(request: request, host: host, parameters: parameters, app: authenticated, pool: pool)
            }
            call = made
            result = .success(try await route.handler(made))
        } catch {
            result = .failure(error)
        }
        var response: HTTPResponse
        switch result {
        case .success(let answer):
            response = HTTPResponse.json(answer.status, answer.body.text)
            response.headers += answer.headers
        case .failure(let error as APIError):
            if error.status >= 500 {
                logger.warning("api request refused", ["route": .string(route.pattern), "status": .int(error.status),
                                                       "message": .string(error.message)])
            }
            response = error.response
        case .failure(let error as PostgresError):
            logger.error("api request failed on the database; answering 503", ["route": .string(route.pattern),
                                                                                 "error": .string("\(error)")])
            response = APIError(503, "Temporarily unavailable; try again.", headers: [("retry-after", "1")]).response
        case .failure(let error):
            logger.error("api request failed", ["route": .string(route.pattern), "error": .string("\(error)")])
            response = APIError(500, "Internal error.").response
        }
        if let status = call?.rateStatus { response.headers += status.headers }
        logger.debug("api request", ["route": .string(route.pattern), "status": .int(response.status),
                                     "caller": .string(call?.caller.logged ?? "-")])
        return response
    }
}

extension Caller {
    /// Who called, as a log line may name them: a backend's client id, an app's customer (never a token).
    var logged: String {
        switch self {
        case .anyone: "-"
        case .backend(let principal): "client " + principal.clientID
        case .app(let principal): "customer " + principal.customerID
        }
    }
}
