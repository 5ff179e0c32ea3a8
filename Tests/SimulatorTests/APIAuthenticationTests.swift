import AppStore
import Crypto
import Foundation
import HTTP
import Simulator
import Testing

/// Every server-API request needs Apple's ES256 bearer token for the app; anything else is 401.
@Suite struct APIAuthenticationTests {
    /// A token with these claims and header fields, signed by `key` (the app's API key by default).
    static func token(iss: String = Fixture.issuerID, iatOffset: Int64 = 0, lifetime: Int64 = 300,
                      aud: String = "appstoreconnect-v1", bid: String = Fixture.bundleID, kid: String = Fixture.keyID,
                      key: PrivateKey? = nil, algorithm: SignatureAlgorithm = .es256) throws -> String {
        let iat = Int64(Date().timeIntervalSince1970) + iatOffset
        let claims: [String: Any] = ["iss": iss, "iat": iat, "exp": iat + lifetime, "aud": aud, "bid": bid]
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return try CompactJWS.sign(payload: payload, algorithm: algorithm, key: key ?? Fixture.apiKey.get(), kid: kid, typ: "JWT")
    }

    @Test("refused tokens get 401 and the failed check is recorded", arguments: [
        ("no header", nil, "no Authorization header"),
        ("not bearer", "Basic dXNlcjpwYXNz", "not a Bearer token"),
        ("not a JWS", "Bearer not.a-token", "not a compact JWS"),
        ("other key", "Bearer \(try token(key: Fixture.foreignKey.get()))", "signature"),
        ("wrong kid", "Bearer \(try token(kid: "OTHERKEY"))", "kid OTHERKEY"),
        ("wrong issuer", "Bearer \(try token(iss: "someone-else"))", "iss someone-else"),
        ("wrong audience", "Bearer \(try token(aud: "appstoreconnect-v2"))", "aud appstoreconnect-v2"),
        ("unknown bundle", "Bearer \(try token(bid: "com.example.unknown"))", "bid com.example.unknown"),
        ("expired", "Bearer \(try token(iatOffset: -3600, lifetime: 1800))", "expired"),
        ("over an hour", "Bearer \(try token(lifetime: 3601))", "at most 3600"),
        ("issued in the future", "Bearer \(try token(iatOffset: 600))", "future"),
        ("RS256", "Bearer \(try token(key: PrivateKey.generate(.rsa(bits: 2048)), algorithm: .rs256))", "alg"),
    ] as [(String, String?, String)])
    func refusedTokens(_ name: String, _ authorization: String?, _ reason: String) async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        var headers: [(name: String, value: String)] = []
        if let authorization { headers.append(("Authorization", authorization)) }
        let response = try await harness.client.send(HTTPClientRequest(
            url: "\(harness.simulator.baseURL)/inApps/v1/subscriptions/\(id)", headers: headers, timeout: .seconds(10)))

        #expect(response.status == 401, "\(name)")
        #expect(harness.simulator.authenticationFailures.last?.contains(reason) == true,
                "\(name): \(harness.simulator.authenticationFailures.last ?? "no failure recorded")")
        #expect(harness.simulator.requestCount(.subscriptionStatuses) == 1)
        await harness.close()
    }

    @Test func aValidTokenOfAnyLifetimeUpToAnHourIsAccepted() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        for authorization in ["Bearer \(try Self.token(lifetime: 3600))", "bearer \(try harness.token())"] {
            let response = try await harness.send("GET", "/inApps/v1/subscriptions/\(id)", authorization: authorization)
            #expect(response.status == 200)
        }
        #expect(harness.simulator.authenticationFailures.isEmpty)
        await harness.close()
    }

    @Test func everyEndpointRequiresAToken() async throws {
        let harness = try Harness(notify: false)
        let id = try await harness.subscribe()
        let requests = [("GET", "/inApps/v1/subscriptions/\(id)"), ("GET", "/inApps/v2/history/\(id)"),
                        ("PUT", "/inApps/v2/transactions/consumption/\(id)"), ("POST", "/inApps/v1/notifications/history")]
        for (method, path) in requests {
            let response = try await harness.client.send(HTTPClientRequest(method: method, url: harness.simulator.baseURL + path,
                                                                           body: Data("{}".utf8), timeout: .seconds(10)))
            #expect(response.status == 401, "\(method) \(path)")
        }
        #expect(harness.simulator.requestCounts == [.subscriptionStatuses: 1, .transactionHistory: 1, .consumption: 1,
                                                    .notificationHistory: 1])
        harness.simulator.resetRequestCounts()
        #expect(harness.simulator.requestCounts.isEmpty)
        await harness.close()
    }
}
