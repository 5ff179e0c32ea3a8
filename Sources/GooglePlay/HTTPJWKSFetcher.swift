import Foundation
import HTTP

/// Fetches Google's JWKS over HTTPS, honouring `Cache-Control: max-age`: the production side of the
/// `JWKSFetcher` seam (tests and the CLI also read key sets from files).
public struct HTTPJWKSFetcher: JWKSFetcher {
    public let url: String
    public let client: HTTPClient

    public init(url: String, client: HTTPClient) {
        self.url = url
        self.client = client
    }

    public func fetchKeySet() async throws -> JWKSDocument {
        let response = try await client.send(HTTPClientRequest(url: url, headers: [("Accept", "application/json")],
                                                                timeout: .seconds(10)))
        guard response.status == 200 else {
            throw HTTPClientError(.other, "JWKS at \(url) answered HTTP \(response.status)")
        }
        return JWKSDocument(json: response.body,
                            maxAge: response.header("cache-control").flatMap(JWKSDocument.maxAge(fromCacheControl:)))
    }
}
