import Foundation
import HTTP
import Testing
import TestSupport

/// Every answer the server gives without a handler is JSON `{"error": …}`, like the handlers' own refusals, so
/// a client parses one shape whichever layer turned it away.
@Suite struct HTTPServerRefusalTests {
    /// A request the server must refuse itself, and the status and words it must answer with.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let method: String
        let path: String
        let headers: [(name: String, value: String)]
        let body: Data
        let status: Int
        let fragment: String

        var testDescription: String { name }
    }

    static let limits: HTTPServerConfiguration = {
        var configuration = HTTPServerConfiguration()
        configuration.maxBodyBytes = 1024
        configuration.maxHeaderBytes = 4096
        return configuration
    }()

    static let refusals: [Refusal] = [
        Refusal(name: "404 no route", method: "GET", path: "/nowhere", headers: [], body: Data(), status: 404,
                fragment: "not found"),
        Refusal(name: "405 a route without this method", method: "DELETE", path: "/upload", headers: [], body: Data(),
                status: 405, fragment: "method not allowed"),
        Refusal(name: "413 a body over the limit", method: "POST", path: "/upload", headers: [], body: Data(count: 1025),
                status: 413, fragment: "at most 1024 bytes"),
        Refusal(name: "431 headers over the limit", method: "GET", path: "/upload",
                headers: [("x-padding", String(repeating: "a", count: 5000))], body: Data(), status: 431,
                fragment: "at most 4096 bytes"),
        Refusal(name: "431 a request target over the limit", method: "GET",
                path: "/upload?" + String(repeating: "q", count: 5000), headers: [], body: Data(), status: 431,
                fragment: "headers too large"),
    ]

    @Test("a refusal the server makes itself is JSON with a reason, and never reaches a handler", arguments: refusals)
    func refusalIsJSON(_ refusal: Refusal) async throws {
        let reached = Counter()
        let (server, base) = try startServer({ router in
            router.route("POST", "/upload") { _ in
                reached.increment()
                return .json(200, "{}")
            }
        }, configuration: Self.limits)
        let client = try HTTPClient()
        let response = try await client.send(HTTPClientRequest(method: refusal.method, url: base + refusal.path,
                                                               headers: refusal.headers, body: refusal.body,
                                                               timeout: .seconds(10)))
        await client.shutdown()
        await server.stop(grace: .seconds(1))

        #expect(response.status == refusal.status)
        #expect(response.header("content-type") == "application/json")
        let object = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
        #expect(object?.keys.sorted() == ["error"], "\(String(decoding: response.body, as: UTF8.self))")
        #expect(object?["error"]?.contains(refusal.fragment) == true, "\(object ?? [:])")
        #expect(reached.value == 0)
    }

    @Test("headers under the limit reach the handler; past it they get 431")
    func headerLimit() async throws {
        let reached = Counter()
        let (server, base) = try startServer({ router in
            router.route("GET", "/h") { _ in
                reached.increment()
                return .json(200, "{}")
            }
        }, configuration: Self.limits)
        let client = try HTTPClient()
        let probe = try await client.send(HTTPClientRequest(url: "\(base)/h", headers: [("x-padding", "")], timeout: .seconds(10)))
        #expect(probe.status == 200)
        var statuses: [Int] = []
        for padding in [3800, 4200] {
            let response = try await client.send(HTTPClientRequest(
                url: "\(base)/h", headers: [("x-padding", String(repeating: "p", count: padding))], timeout: .seconds(10)))
            statuses.append(response.status)
        }
        await client.shutdown()
        await server.stop(grace: .seconds(1))
        #expect(statuses == [200, 431])
        #expect(reached.value == 2)
    }
}
