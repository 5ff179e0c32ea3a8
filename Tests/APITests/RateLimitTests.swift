import Foundation
import HTTP
import TestSupport
import Testing

/// The account's REST budget and an app token's budget: one count in PostgreSQL for every process serving the
/// API, so two `serve` processes do not double either; a limited request answers the reference's 429 with its
/// headers.
@Suite struct RateLimitTests {
    /// The budget a request spends, and the request: a backend's (the account's REST budget) or an app's (its
    /// token's own).
    enum Caller: String, CaseIterable, Sendable {
        case backend, app
    }

    @Test(arguments: Caller.allCases)
    func twoServeProcessesShareOneBudget(caller: Caller) async throws {
        var options = APIHarness.Options()
        options.rateLimit = 5
        options.appTokenRateLimit = 5
        try await APIHarness.with(options) { api in
            let request: (Int) -> HTTPClientRequest
            switch caller {
            case .backend:
                let token = try await api.accessToken()
                let customer = try await api.addCustomer()
                request = { port in
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/mobile-stores/customers/\(customer)/entitlements",
                                      headers: [("Host", APIHarness.host), ("Authorization", "Bearer \(token)")])
                }
            case .app:
                let pair = try await api.customerWithPair()
                request = { port in
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/mobile-stores/client/entitlements",
                                      headers: [("Host", APIHarness.host)] + pair.headers)
                }
            }
            try await Self.withTwoServeProcesses(api) { ports, client in
                var answers: [HTTPClientResponse] = []
                for _ in 0..<4 {
                    for port in ports { answers.append(try await client.send(request(port))) }
                }
                #expect(answers.map(\.status) == [200, 200, 200, 200, 200, 429, 429, 429])
                #expect(answers.map { Self.header($0, "x-ratelimit-remaining") } == ["4", "3", "2", "1", "0", "0", "0", "0"])
                #expect(answers.allSatisfy { Self.header($0, "x-ratelimit-limit") == "5" })
                let limited = try #require(answers.last)
                #expect(String(decoding: limited.body, as: UTF8.self) == #"{"message":"Too Many Attempts."}"#)
                let retryAfter = try #require(Self.header(limited, "retry-after").flatMap(Int.init))
                #expect((1...60).contains(retryAfter))
            }
            #expect(try await api.scalar("SELECT count(*) FROM api_rate_windows WHERE bucket = 'rest'", as: Int.self)
                == (caller == .backend ? 1 : 0), "an app's requests never spend the REST budget")
        }
    }

    /// Runs `body` against two `serve` processes on the harness's database, then stops them.
    static func withTwoServeProcesses(_ api: APIHarness,
                                      _ body: ([Int], HTTPClient) async throws -> Void) async throws {
        var daemons: [ChildProcess] = []
        let client = try HTTPClient()
        do {
            var ports: [Int] = []
            for _ in 0..<2 {
                let daemon = try ChildProcess("storesync", ["serve", "--listen", "127.0.0.1:0"], environment: [
                    "DATABASE_URL": api.database.url, "STORESYNC_API_DATABASE_URL": api.apiRoleURL,
                ])
                daemons.append(daemon)
                try await eventually("serve to log its port; stderr: \(daemon.stderr.suffix(1500))") {
                    Self.loggedPort(daemon) != nil
                }
                let port = try #require(Self.loggedPort(daemon))
                try await eventually("serve to be ready; stderr: \(daemon.stderr.suffix(1500))") {
                    (try? await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/readyz")).status) == 200
                }
                ports.append(port)
            }
            try await body(ports, client)
        } catch {
            Issue.record("\(error); stderr: \(daemons.map { $0.stderr.suffix(1500) })")
        }
        for daemon in daemons {
            daemon.signal(SIGTERM)
            _ = try await daemon.wait()
        }
        await client.shutdown()
    }

    @Test func aNewWindowRestoresTheBudget() async throws {
        var options = APIHarness.Options()
        options.rateLimit = 1
        try await APIHarness.with(options) { api in
            let token = try await api.accessToken()
            let path = "/api/v1/mobile-stores/customers/\(try await api.addCustomer())/entitlements"
            #expect(try await api.send("GET", path, bearer: token).status == 200)
            #expect(try await api.send("GET", path, bearer: token).status == 429)
            try await api.database.pool.query("UPDATE api_rate_windows SET window_started_at = now() - interval '61 seconds'")
            let answer = try await api.send("GET", path, bearer: token)
            #expect(answer.status == 200)
            #expect(answer.header("x-ratelimit-remaining") == "0")
        }
    }

    static func loggedPort(_ child: ChildProcess) -> Int? {
        for line in child.stderr.split(separator: "\n") where line.contains(#""message":"listening""#) {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if let port = object?["port"] as? Int { return port }
        }
        return nil
    }

    static func header(_ response: HTTPClientResponse, _ name: String) -> String? {
        response.headers.first { $0.name == name }?.value
    }
}
