import Accounts
import Crypto
import Foundation
import HTTP
import TestSupport
import Testing

/// The app endpoints' `X-SF-Account-Token` / `X-SF-Client-Secret` pair: only an active token of the host's
/// account with its own secret authenticates, every other pair answers the same 401, and each pair's requests
/// are limited apart from the account's REST budget — per token when the pair is right, per address when not.
@Suite struct AppAuthenticationTests {
    static let path = "/api/v1/mobile-stores/client/entitlements"
    static let invalid = #"{"status":false,"message":"Invalid account token or client secret"}"#

    /// Every way a pair can be wrong, each answered byte for byte the same.
    @Test func everyWrongPairAnswersTheSame401() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let revoked = try await api.customerWithPair()
            _ = try await api.database.pool.transaction { db in try AccountTokens.revoke(token: revoked.token, on: db) }
            let otherTenant = try await Self.pairOfAnotherAccount(api)
            let cases: [(String, [(name: String, value: String)])] = [
                ("no headers", []),
                ("no secret", [("X-SF-Account-Token", pair.token)]),
                ("no token", [("X-SF-Client-Secret", pair.secret)]),
                ("empty values", [("X-SF-Account-Token", ""), ("X-SF-Client-Secret", "")]),
                ("a token that is no UUID", [("X-SF-Account-Token", "not-a-token"), ("X-SF-Client-Secret", pair.secret)]),
                ("an unknown token", [("X-SF-Account-Token", UUID().uuidString), ("X-SF-Client-Secret", pair.secret)]),
                ("a wrong secret", [("X-SF-Account-Token", pair.token), ("X-SF-Client-Secret", String(pair.secret.reversed()))]),
                ("the secret in other case", [("X-SF-Account-Token", pair.token),
                                              ("X-SF-Client-Secret", pair.secret.uppercased())]),
                ("the secret with a byte more", [("X-SF-Account-Token", pair.token), ("X-SF-Client-Secret", pair.secret + "x")]),
                ("another customer's secret", [("X-SF-Account-Token", pair.token), ("X-SF-Client-Secret", revoked.secret)]),
                ("a revoked token", revoked.headers),
                ("another tenant's pair", otherTenant.headers),
                ("an oversized secret", [("X-SF-Account-Token", pair.token),
                                         ("X-SF-Client-Secret", String(repeating: "a", count: 4000))]),
                ("the bearer scheme instead", [("Authorization", "Bearer \(pair.secret)")]),
            ]
            for (name, headers) in cases {
                let answer = try await api.send("GET", Self.path, headers: headers)
                #expect(answer.status == 401, "\(name): \(answer.text)")
                #expect(answer.text == Self.invalid, "\(name)")
                #expect(answer.header("www-authenticate") == nil, "\(name): the pair is no HTTP authentication scheme")
            }
            #expect(try await api.sendAsApp("GET", Self.path, pair: pair).status == 200, "the right pair still works")
        }
    }

    @Test func theRightPairReadsItsOwnCustomersEntitlementsOnItsTokensBudget() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let answer = try await api.sendAsApp("GET", Self.path, pair: pair)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.text == #"{"entitlements":[]}"#)
            #expect(answer.header("x-ratelimit-limit") == "120")
            #expect(answer.header("x-ratelimit-remaining") == "119")
            #expect(try await api.scalar("SELECT hits FROM api_rate_windows WHERE bucket = $1", ["app-token:" + pair.token],
                                         as: Int.self) == 1)
        }
    }

    /// A token revoked through the backend endpoint stops authenticating the very next request (no cache).
    @Test func aRevokedTokenStopsAtOnce() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            #expect(try await api.sendAsApp("GET", Self.path, pair: pair).status == 200)
            let revoke = try await api.send("DELETE", "/api/v1/mobile-stores/account-tokens/\(pair.token)",
                                            bearer: try await api.accessToken())
            #expect(revoke.status == 200, "\(revoke.text)")
            let answer = try await api.sendAsApp("GET", Self.path, pair: pair)
            #expect(answer.status == 401)
            #expect(answer.text == Self.invalid)
        }
    }

    /// Junk from one address is limited there: it spends neither the token's budget it guesses at nor the
    /// account's, and the right pair from the same address (one NAT) goes on working.
    @Test func wrongPairsCountOnlyAgainstTheirAddress() async throws {
        var options = APIHarness.Options()
        options.appAddressFailureLimit = 3
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let wrong = APIHarness.AppPair(customerID: pair.customerID, token: pair.token, secret: "wrong")
            var statuses: [Int] = []
            for _ in 0..<5 { statuses.append(try await api.sendAsApp("GET", Self.path, pair: wrong).status) }
            #expect(statuses == [401, 401, 401, 429, 429])
            let limited = try await api.sendAsApp("GET", Self.path, pair: wrong)
            #expect(limited.text == #"{"message":"Too Many Attempts."}"#)
            #expect(limited.header("x-ratelimit-limit") == "3")
            #expect(limited.header("x-ratelimit-remaining") == "0")
            #expect((1...60).contains(try #require(limited.header("retry-after").flatMap(Int.init))))
            let right = try await api.sendAsApp("GET", Self.path, pair: pair)
            #expect(right.status == 200, "\(right.text)")
            #expect(right.header("x-ratelimit-remaining") == "119", "the failures spent nothing of the token's budget")
            #expect(try await api.scalar("SELECT count(*) FROM api_rate_windows WHERE bucket = 'rest'", as: Int.self) == 0)
            #expect(try await api.scalar("SELECT bucket FROM api_rate_windows WHERE bucket LIKE 'app-address:%'",
                                         as: String.self) == "app-address:127.0.0.1")
        }
    }

    /// Behind a trusted load balancer each client's failures count apart, by the address it forwards; a client
    /// talking to the server directly cannot pick its own bucket with the header.
    @Test(arguments: [false, true])
    func behindATrustedProxyFailuresCountPerForwardedClient(trusted: Bool) async throws {
        var options = APIHarness.Options()
        options.appAddressFailureLimit = 2
        if trusted { options.trustedProxies = [try #require(IPAddressRange("127.0.0.0/8"))] }
        try await APIHarness.with(options) { api in
            let wrong = APIHarness.AppPair(customerID: "-", token: UUID().uuidString, secret: "wrong")
            var statuses: [String: [Int]] = [:]
            for client in ["203.0.113.7", "198.51.100.9"] {
                for _ in 0..<3 {
                    let answer = try await api.sendAsApp("GET", Self.path, pair: wrong, headers: [("X-Forwarded-For", client)])
                    statuses[client, default: []].append(answer.status)
                }
            }
            let buckets = try await api.database.pool.query("SELECT bucket FROM api_rate_windows ORDER BY bucket")
                .map { try $0.decode(0, as: String.self) }
            if trusted {
                #expect(statuses == ["203.0.113.7": [401, 401, 429], "198.51.100.9": [401, 401, 429]])
                #expect(buckets == ["app-address:198.51.100.9", "app-address:203.0.113.7"])
            } else {
                #expect(statuses == ["203.0.113.7": [401, 401, 429], "198.51.100.9": [429, 429, 429]])
                #expect(buckets == ["app-address:127.0.0.1"])
            }
        }
    }

    /// The app endpoints take no bearer token: a backend's token is not an app's pair.
    @Test func aBackendTokenDoesNotAuthenticateAnApp() async throws {
        try await APIHarness.with { api in
            let answer = try await api.send("GET", Self.path, bearer: try await api.accessToken())
            #expect(answer.status == 401)
            #expect(answer.text == Self.invalid)
        }
    }

    /// A token of a second account (another tenant host), with its secret.
    static func pairOfAnotherAccount(_ api: APIHarness) async throws -> APIHarness.AppPair {
        try await api.database.pool.transaction { db in
            let accountID = try Catalog.addAccount(host: "other.test", on: db)
            let customer = try Catalog.addCustomer(accountID: accountID, on: db)
            let issued = try AccountTokens.issue(customerID: customer, sha256: { Digest.sha256($0) }, on: db)
            return APIHarness.AppPair(customerID: customer, token: issued.token, secret: try #require(issued.secret))
        }
    }
}
