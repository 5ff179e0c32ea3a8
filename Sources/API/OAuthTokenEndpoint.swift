import Accounts
import Crypto
import Foundation
import HTTP
import Logging
import Postgres

/// `POST /oauth/token`: the client credentials grant (RFC 6749 §4.4) for the host's API clients. Answers and
/// refusals are RFC 6749 §5.1/§5.2's — `{"error": "invalid_client", "error_description": …}` — not the
/// API's shape: OAuth client libraries parse these.
struct OAuthTokenEndpoint: Sendable {
    let pool: PostgresPool
    let lifetime: Duration
    private let logger = Logger(component: "oauth")

    init(pool: PostgresPool, lifetime: Duration) {
        self.pool = pool
        self.lifetime = lifetime
    }

    /// Why a request was refused, as RFC 6749 §5.2 names it.
    struct Refusal: Error {
        let status: Int
        let code: String
        let description: String
        var headers: [(name: String, value: String)] = []
    }

    func answer(_ call: APICall) async -> APIAnswer {
        do {
            return try await grant(call)
        } catch let refusal as Refusal {
            return APIAnswer(status: refusal.status, body: .object([
                ("error", .string(refusal.code)), ("error_description", .string(refusal.description)),
            ]), headers: Self.noStore + refusal.headers)
        } catch {
            logger.error("could not issue an access token", ["error": .string("\(error)")])
            return APIAnswer(status: 503, body: .object([
                ("error", .string("temporarily_unavailable")),
                ("error_description", .string("The token service is temporarily unavailable; try again.")),
            ]), headers: Self.noStore + [("retry-after", "1")])
        }
    }

    /// RFC 6749 §5.1: token answers, and their refusals, must not be cached.
    private static let noStore = [("cache-control", "no-store"), ("pragma", "no-cache")]

    private func grant(_ call: APICall) async throws -> APIAnswer {
        let request = call.request
        let type = request.header("content-type")?.split(separator: ";").first?.trimmingHTTPWhitespace.lowercased()
        guard type == "application/x-www-form-urlencoded" else {
            throw Refusal(status: 400, code: "invalid_request",
                          description: "The request must be application/x-www-form-urlencoded.")
        }
        guard let fields = PercentEncoding.decodeForm(request.body) else {
            throw Refusal(status: 400, code: "invalid_request", description: "The form body is not valid URL encoding of UTF-8.")
        }
        var form: [String: String] = [:]
        for field in fields {
            // RFC 6749 §3.2: parameters sent without a value are treated as omitted; none may repeat.
            guard form[field.name] == nil else {
                throw Refusal(status: 400, code: "invalid_request", description: "Parameter \(field.name.prefix(40)) is repeated.")
            }
            if !field.value.isEmpty { form[field.name] = field.value }
        }
        guard let grantType = form["grant_type"] else {
            throw Refusal(status: 400, code: "invalid_request", description: "grant_type is required.")
        }
        guard grantType == "client_credentials" else {
            throw Refusal(status: 400, code: "unsupported_grant_type", description: "Only client_credentials is supported.")
        }
        let (clientID, secret, basic) = try credentials(request.header("authorization"), form: form)
        let scopes = try form["scope"].map(Self.scopes)
        let refusedClient = Refusal(status: 401, code: "invalid_client", description: "Client authentication failed.",
                                    headers: basic ? [("www-authenticate", #"Basic realm="oauth", charset="UTF-8""#)] : [])
        guard clientID.utf8.count <= 100, secret.utf8.count <= 200 else { throw refusedClient }
        let lifetime = lifetime
        let host = call.host
        let issued = try await pool.transaction { db in
            try APIAccessTokens.issue(clientID: clientID, secret: secret, host: host, requestedScopes: scopes,
                                      lifetime: lifetime, sha256: { Digest.sha256($0) }, on: db)
        }
        switch issued {
        case .success(let token):
            logger.info("access token issued", ["client_id": .string(clientID), "host": .string(host)])
            return APIAnswer(status: 200, body: .object([
                ("access_token", .string(token.token)), ("token_type", .string("Bearer")),
                ("expires_in", .int(token.expiresIn)), ("scope", .string(token.scopes.joined(separator: " "))),
            ]), headers: Self.noStore)
        case .failure(.invalidClient):
            logger.info("client authentication failed", ["client_id": .string(String(clientID.prefix(40))),
                                                          "host": .string(host)])
            throw refusedClient
        case .failure(.invalidScope(let scope)):
            throw Refusal(status: 400, code: "invalid_scope",
                          description: "The client may not request scope \(scope.prefix(100)).")
        }
    }

    /// The client's id and secret from HTTP Basic (RFC 6749 §2.3.1: each form-encoded, then joined by `:`) or
    /// the body, never both; whether Basic was used.
    private func credentials(_ authorization: String?, form: [String: String]) throws -> (String, String, Bool) {
        let inBody = form["client_id"] != nil || form["client_secret"] != nil
        guard let authorization else {
            guard let id = form["client_id"], let secret = form["client_secret"] else {
                throw Refusal(status: 401, code: "invalid_client",
                              description: "Send client_id and client_secret, in the body or with HTTP Basic.")
            }
            return (id, secret, false)
        }
        guard !inBody else {
            throw Refusal(status: 400, code: "invalid_request",
                          description: "Authenticate with HTTP Basic or with the body's client_id and client_secret, not both.")
        }
        let parts = authorization.trimmingHTTPWhitespace.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic", parts[1].utf8.count <= 1024,
              let decoded = Data(base64Encoded: String(parts[1].trimmingHTTPWhitespace)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
              let id = PercentEncoding.decode(decoded[..<colon]),
              let secret = PercentEncoding.decode(decoded[(colon + 1)...]) else {
            throw Refusal(status: 401, code: "invalid_client", description: "The Authorization header is not HTTP Basic.",
                          headers: [("www-authenticate", #"Basic realm="oauth", charset="UTF-8""#)])
        }
        return (id, secret, true)
    }

    /// RFC 6749 §3.3: space-delimited scope tokens.
    private static func scopes(_ text: String) throws -> [String] {
        let scopes = text.split(separator: " ").map(String.init)
        guard (1...16).contains(scopes.count), scopes.allSatisfy(APIClients.isValidScope) else {
            throw Refusal(status: 400, code: "invalid_scope", description: "scope must be 1…16 space-separated scope tokens.")
        }
        return scopes
    }
}
