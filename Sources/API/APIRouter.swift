import HTTP
import Logging
import Postgres

/// Who may call a route.
enum Access: Sendable {
    /// Anyone: the token endpoint (which authenticates clients itself) and the published document.
    case open
    /// A backend: a bearer token of the host's account carrying `access-global-api`, charged to the
    /// account's REST budget.
    case backend
    /// An app: an active account token of the host's account and its client secret, acting for the token's
    /// customer, charged to the token's own budget. `read`, when given, is sent in the round trip that
    /// authenticates (keyed by the token the request claims; answered only when the pair is right).
    case app(read: AppRead?)

    typealias AppRead = @Sendable (_ token: String, _ host: String) -> PostgresQuery<JSONValue>
}

/// An endpoint's answer: a JSON document, its status and any headers of its own.
struct APIAnswer: Sendable {
    var status: Int
    var body: JSONValue
    var headers: [(name: String, value: String)] = []
}

/// One endpoint: a method and a path pattern whose `{name}` segments are parameters.
struct APIRoute: Sendable {
    typealias Handler = @Sendable (APICall) async throws -> APIAnswer

    let method: String
    let pattern: String
    let access: Access
    let handler: Handler

    fileprivate var segments: [Substring] { pattern.split(separator: "/", omittingEmptySubsequences: false) }
}

/// The Mobile Stores API's routes: a table of patterns, matched segment by segment. Kept apart from the
/// server's router so that every path under the API's prefix, known or not, is answered in the API's own
/// error shape.
struct APIRouter: Sendable {
    enum Match {
        case route(APIRoute, parameters: [String: String])
        case notFound
        case methodNotAllowed(allowed: [String])
    }

    let routes: [APIRoute]

    func match(method: String, path: String) -> Match {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var allowed: [String] = []
        for route in routes {
            guard let parameters = Self.parameters(of: route, in: segments) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .route(route, parameters: parameters)
            }
            allowed.append(route.method)
        }
        guard !allowed.isEmpty else { return .notFound }
        if allowed.contains("GET") { allowed.append("HEAD") }
        return .methodNotAllowed(allowed: Array(Set(allowed)).sorted())
    }

    /// The parameters when `segments` fit the route's pattern; a parameter never matches an empty segment.
    private static func parameters(of route: APIRoute, in segments: [Substring]) -> [String: String]? {
        let pattern = route.segments
        guard pattern.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, segments) {
            if expected.hasPrefix("{") && expected.hasSuffix("}") {
                guard !actual.isEmpty else { return nil }
                parameters[String(expected.dropFirst().dropLast())] = String(actual)
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}
