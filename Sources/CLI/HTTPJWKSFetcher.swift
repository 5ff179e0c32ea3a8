import Foundation
import GooglePlay
import HTTP

/// Fetches Google's JWKS over HTTPS, honouring `Cache-Control: max-age`; the HTTP-backed side of the
/// `JWKSFetcher` seam, so `GooglePlay` itself never depends on the HTTP client.
struct HTTPJWKSFetcher: JWKSFetcher {
    let url: String
    let client: HTTPClient

    func fetchKeySet() async throws -> JWKSDocument {
        let response = try await client.send(HTTPClientRequest(url: url, headers: [("Accept", "application/json")],
                                                                timeout: .seconds(10)))
        guard response.status == 200 else {
            throw HTTPClientError(.other, "JWKS at \(url) answered HTTP \(response.status)")
        }
        return JWKSDocument(json: response.body,
                            maxAge: response.header("cache-control").flatMap(JWKSDocument.maxAge(fromCacheControl:)))
    }
}
