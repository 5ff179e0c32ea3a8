import Crypto
import Foundation
import GooglePlay
import HTTP
import Logging

/// Google's OAuth 2.0 token endpoint for the JWT-bearer grant (google.md §4): the form
/// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=JWT` is exchanged for an access token
/// when the assertion is signed RS256 by the configured service account's key and its claims hold — `iss` the
/// client email, `scope` including androidpublisher, `aud` this endpoint, `exp − iat ≤ 1 h`, not expired,
/// not issued in the future. Refusals use Google's `{"error", "error_description"}` answers.
struct TokenEndpoint: Sendable {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let maxAssertionLength = 8 * 1024
    /// Tolerated difference between the caller's clock and ours for `iat`.
    static let clockSkew: Int64 = 60

    let account: SimulatedServiceAccount

    struct Refusal: Error {
        let error: String
        let description: String

        var response: HTTPResponse {
            .json(400, "{\"error\":\(JSON.quoted(error)),\"error_description\":\(JSON.quoted(description))}")
        }
    }

    private struct Claims: Decodable {
        let iss: String?
        let scope: String?
        let aud: String?
        let iat: Int64?
        let exp: Int64?
    }

    private static let timeframe = "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."

    /// Checks the form body of a token request sent to `tokenURI`; on success the caller issues a token.
    func check(_ body: Data, tokenURI: String, now: Date = Date()) throws(Refusal) {
        guard body.count <= Self.maxAssertionLength + 256, let form = QueryItems(String(decoding: body, as: UTF8.self)) else {
            throw Refusal(error: "invalid_request", description: "The request body is not a form of acceptable size.")
        }
        let grant = form.values("grant_type")
        guard grant == [Self.grantType] else {
            throw Refusal(error: "unsupported_grant_type", description: "Invalid grant_type: \(grant.first?.prefix(80) ?? "")")
        }
        guard let assertion = form.values("assertion").first, form.values("assertion").count == 1 else {
            throw Refusal(error: "invalid_request", description: "Missing required parameter: assertion")
        }
        let jws: CompactJWS
        let claims: Claims
        do {
            jws = try CompactJWS(assertion, maxLength: Self.maxAssertionLength)
            claims = try JSONDecoder().decode(Claims.self, from: jws.payload)
        } catch {
            throw Refusal(error: "invalid_grant", description: "Invalid JWT: the assertion is not a signed JWT with a JSON claim set.")
        }
        if let expected = account.privateKeyID, let kid = jws.header.kid, kid != expected {
            throw Refusal(error: "invalid_grant", description: "Invalid JWT Signature.")
        }
        do {
            try jws.verify(.rs256, with: account.publicKey)
        } catch {
            throw Refusal(error: "invalid_grant", description: "Invalid JWT Signature.")
        }
        guard claims.iss == account.clientEmail else {
            throw Refusal(error: "invalid_grant", description: "Invalid grant: account not found")
        }
        guard claims.aud == tokenURI else {
            throw Refusal(error: "invalid_grant", description: "Invalid JWT: Failed audience check. The right audience is \(tokenURI)")
        }
        guard let scope = claims.scope, scope.split(separator: " ").contains(Substring(ServiceAccountAssertion.androidPublisherScope)) else {
            throw Refusal(error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.")
        }
        guard let issuedAt = claims.iat, let expires = claims.exp else {
            throw Refusal(error: "invalid_grant", description: Self.timeframe)
        }
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        guard expires > seconds, issuedAt <= seconds + Self.clockSkew, expires > issuedAt, expires - issuedAt <= 3600 else {
            throw Refusal(error: "invalid_grant", description: Self.timeframe)
        }
    }
}
