import Foundation
import HTTP
import Logging

/// The Google routes: the OAuth token endpoint, the push key set, and the Play Developer API under
/// `/androidpublisher/v3/applications/`. API requests are counted, delayed by the configured latency,
/// authenticated with an access token from the token endpoint (401 otherwise), subjected to injected
/// 429/500/401 faults, then answered.
extension PlayCore {
    static let apiPrefix = "/androidpublisher/v3/applications/"
    static let tokenPath = "/token"
    static let certificatesPath = "/oauth2/v3/certs"

    /// A Play Developer API request, parsed from its path.
    enum Route {
        case subscription(token: String)
        case acknowledge(subscriptionId: String, token: String)
        case order(id: String)
        case batchOrders
        case voidedPurchases

        var endpoint: PlayEndpoint {
            switch self {
            case .subscription: .subscriptionsV2
            case .acknowledge: .acknowledge
            case .order: .order
            case .batchOrders: .ordersBatchGet
            case .voidedPurchases: .voidedPurchases
            }
        }

        /// `{packageName}/…` after the API prefix; `nil` for a path the API does not have.
        static func parse(method: String, _ rest: Substring) -> (packageName: String, route: Route)? {
            let segments = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard segments.count >= 2, segments.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 1024 }) else { return nil }
            let package = segments[0]
            switch (method, segments.count, segments[1]) {
            case ("GET", 5, "purchases") where segments[2] == "subscriptionsv2" && segments[3] == "tokens":
                return (package, .subscription(token: segments[4]))
            case ("POST", 6, "purchases") where segments[2] == "subscriptions" && segments[4] == "tokens"
                && segments[5].hasSuffix(":acknowledge") && segments[5].count > ":acknowledge".count:
                return (package, .acknowledge(subscriptionId: segments[3], token: String(segments[5].dropLast(":acknowledge".count))))
            case ("GET", 3, "orders"):
                return (package, .order(id: segments[2]))
            case ("GET", 2, "orders:batchGet"):
                return (package, .batchOrders)
            case ("GET", 3, "purchases") where segments[2] == "voidedpurchases":
                return (package, .voidedPurchases)
            default:
                return nil
            }
        }
    }

    func installAPI(into router: inout HTTPRouter) {
        router.route("POST", Self.tokenPath) { request in self.token(request) }
        router.route("GET", Self.certificatesPath) { _ in self.certificates() }
        for method in ["GET", "POST"] {
            router.route(method, prefix: Self.apiPrefix) { request in await self.api(request) }
        }
    }

    // MARK: OAuth and keys

    private func token(_ request: HTTPRequest) -> HTTPResponse {
        counters.increment(.token)
        do {
            try tokenEndpoint.check(request.body, tokenURI: tokenURI.withLock { $0 })
        } catch {
            noteAuthenticationFailure("token endpoint: \(error.error): \(error.description)")
            logger.warning("token request refused", ["error": .string(error.error), "reason": .string(error.description)])
            return error.response
        }
        let lifetime = accessTokenLifetime
        let token = accessTokens.issue(lifetime: lifetime)
        let body = "{\"access_token\":\(JSON.quoted(token)),\"expires_in\":\(lifetime.wholeMilliseconds / 1000),\"token_type\":\"Bearer\"}"
        return HTTPResponse(status: 200, headers: [("content-type", "application/json; charset=utf-8"), ("cache-control", "no-store")],
                            body: Data(body.utf8))
    }

    private func certificates() -> HTTPResponse {
        counters.increment(.certificates)
        do {
            let maxAge = jwksMaxAge.wholeMilliseconds / 1000
            return HTTPResponse(status: 200, headers: [("content-type", "application/json; charset=UTF-8"),
                                                       ("cache-control", "public, max-age=\(maxAge), must-revalidate, no-transform")],
                                body: try keys.jwks())
        } catch {
            logger.error("cannot publish the push keys", ["error": .string("\(error)")])
            return PlayAPIError.backendError.response
        }
    }

    // MARK: Play Developer API

    private func api(_ request: HTTPRequest) async -> HTTPResponse {
        guard let (packageName, route) = Route.parse(method: request.method.uppercased(), request.path.dropFirst(Self.apiPrefix.count)) else {
            return PlayAPIError.notFound.response
        }
        counters.increment(route.endpoint)
        let latency = faults.latency
        if latency > .zero { try? await Task.sleep(for: latency) }
        if let refusal = accessTokens.refusal(request.header("authorization")) {
            noteAuthenticationFailure("\(route.endpoint.rawValue): \(refusal)")
            logger.warning("Play API request refused", ["endpoint": .string(route.endpoint.rawValue), "reason": .string(refusal)])
            return PlayAPIError.unauthenticated.response
        }
        if let fault = faults.takeRequestFault() { return fault.response }
        do {
            guard state.withLock({ $0.apps[packageName] != nil }) else { throw PlayAPIError.applicationNotFound }
            let body: [String: Any]
            switch route {
            case .subscription(let token):
                body = try subscriptionResource(packageName, token)
            case .acknowledge(let subscriptionId, let token):
                try acknowledge(packageName, subscriptionId: subscriptionId, token: token, body: request.body)
                return HTTPResponse(status: 204)
            case .order(let id):
                body = try orderResource(packageName, id)
            case .batchOrders:
                body = try batchOrders(packageName, request.query)
            case .voidedPurchases:
                body = try voidedPurchases(packageName, request.query)
            }
            return HTTPResponse(status: 200, headers: [("content-type", "application/json; charset=UTF-8")],
                                body: try JSONBody.encode(body))
        } catch let error as PlayAPIError {
            return error.response
        } catch {
            logger.error("Play API request failed", ["endpoint": .string(route.endpoint.rawValue), "error": .string("\(error)")])
            return PlayAPIError.backendError.response
        }
    }
}
