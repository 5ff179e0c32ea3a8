import Accounts
import Crypto
import Foundation
import TestSupport
import Testing

/// `POST /oauth/token` as RFC 6749 §4.4, §5.1 and §5.2 say, and the bearer token it issues on the backend
/// endpoints.
@Suite struct OAuthTokenTests {
    @Test func issuesAnExpiringBearerTokenThatCannotBeCached() async throws {
        try await APIHarness.with { api in
            let answer = try await api.requestToken([("grant_type", "client_credentials"), ("client_id", api.clientID),
                                                     ("client_secret", api.clientSecret)])
            #expect(answer.status == 200)
            #expect(answer.header("cache-control") == "no-store")
            let json = try answer.json
            #expect(json["token_type"] as? String == "Bearer")
            #expect(json["expires_in"] as? Int == 3600)
            #expect(json["scope"] as? String == "access-global-api")
            let token = try #require(json["access_token"] as? String)
            let stored = try await api.scalar("SELECT count(*) FROM api_access_tokens WHERE token_sha256 = $1",
                                              [Digest.sha256(Data(token.utf8))], as: Int.self)
            #expect(stored == 1, "only the token's hash is kept")
            let read = try await api.send("GET", "/api/v1/mobile-stores/customers/\(try await api.addCustomer())/entitlements",
                                          bearer: token)
            #expect(read.status == 200, "\(read.text)")
        }
    }

    @Test func acceptsHTTPBasicCredentials() async throws {
        try await APIHarness.with { api in
            let basic = Data("\(api.clientID):\(api.clientSecret)".utf8).base64EncodedString()
            let answer = try await api.requestToken([("grant_type", "client_credentials")],
                                                    headers: [("Authorization", "Basic \(basic)")])
            #expect(answer.status == 200, "\(answer.text)")
        }
    }

    /// Each refusal with its RFC 6749 §5.2 code and status.
    @Test(arguments: [
        ([("client_id", "C"), ("client_secret", "S")], 400, "invalid_request"),
        ([("grant_type", "password"), ("client_id", "C"), ("client_secret", "S")], 400, "unsupported_grant_type"),
        ([("grant_type", "client_credentials"), ("grant_type", "client_credentials"), ("client_id", "C"),
          ("client_secret", "S")], 400, "invalid_request"),
        ([("grant_type", "client_credentials"), ("client_id", "C"), ("client_secret", "wrong")], 401, "invalid_client"),
        ([("grant_type", "client_credentials"), ("client_id", "7d0c6d0e-0000-4000-8000-000000000000"),
          ("client_secret", "S")], 401, "invalid_client"),
        ([("grant_type", "client_credentials")], 401, "invalid_client"),
        ([("grant_type", "client_credentials"), ("client_id", "C"), ("client_secret", "S"), ("scope", "admin")], 400,
         "invalid_scope"),
    ] as [([(String, String)], Int, String)])
    func refusesAsRFC6749Says(fields: [(String, String)], status: Int, code: String) async throws {
        try await APIHarness.with { api in
            let resolved = fields.map { field in
                (field.0, field.1 == "C" ? api.clientID : field.1 == "S" ? api.clientSecret : field.1)
            }
            let answer = try await api.requestToken(resolved)
            #expect(answer.status == status, "\(answer.text)")
            #expect(try answer.json["error"] as? String == code)
            #expect(answer.header("cache-control") == "no-store")
            #expect(answer.header("www-authenticate") == nil, "only a Basic client is challenged")
        }
    }

    @Test func challengesAClientThatFailedHTTPBasic() async throws {
        try await APIHarness.with { api in
            let basic = Data("\(api.clientID):wrong".utf8).base64EncodedString()
            let answer = try await api.requestToken([("grant_type", "client_credentials")],
                                                    headers: [("Authorization", "Basic \(basic)")])
            #expect(answer.status == 401)
            #expect(try answer.json["error"] as? String == "invalid_client")
            #expect(answer.header("www-authenticate")?.hasPrefix("Basic") == true)
        }
    }

    @Test func refusesTwoAuthenticationMethodsAndOtherContentTypes() async throws {
        try await APIHarness.with { api in
            let basic = Data("\(api.clientID):\(api.clientSecret)".utf8).base64EncodedString()
            let both = try await api.requestToken([("grant_type", "client_credentials"), ("client_id", api.clientID),
                                                   ("client_secret", api.clientSecret)],
                                                  headers: [("Authorization", "Basic \(basic)")])
            #expect(both.status == 400)
            #expect(try both.json["error"] as? String == "invalid_request")
            let json = try await api.send("POST", "/oauth/token", json: #"{"grant_type":"client_credentials"}"#)
            #expect(json.status == 400)
            #expect(try json.json["error"] as? String == "invalid_request")
        }
    }

    @Test func aClientOfAnotherTenantIsUnknownHere() async throws {
        try await APIHarness.with { api in
            _ = try await api.database.pool.transaction { db in try Catalog.addAccount(host: "other.test", on: db) }
            let answer = try await api.requestToken([("grant_type", "client_credentials"), ("client_id", api.clientID),
                                                     ("client_secret", api.clientSecret)], host: "other.test")
            #expect(answer.status == 401)
            #expect(try answer.json["error"] as? String == "invalid_client")
        }
    }

    @Test func aRevokedClientCannotGetTokensAndItsTokensStopWithinSeconds() async throws {
        try await APIHarness.with { api in
            let token = try await api.accessToken()
            let path = "/api/v1/mobile-stores/customers/\(try await api.addCustomer())/entitlements"
            #expect(try await api.send("GET", path, bearer: token).status == 200)
            let clientID = api.clientID
            _ = try await api.database.pool.transaction { db in try APIClients.revoke(clientID: clientID, on: db) }
            let refused = try await api.requestToken([("grant_type", "client_credentials"), ("client_id", api.clientID),
                                                      ("client_secret", api.clientSecret)])
            #expect(refused.status == 401)
            try await eventually("the revoked client's token still authenticates", timeout: .seconds(10)) {
                try await api.send("GET", path, bearer: token).status == 401
            }
        }
    }

    @Test func anExpiredTokenIsUnauthenticated() async throws {
        try await APIHarness.with { api in
            let token = try await api.accessToken()
            try await api.database.pool.query("UPDATE api_access_tokens SET expires_at = now() - interval '1 second'")
            let answer = try await api.send("GET", "/api/v1/mobile-stores/customers/\(try await api.addCustomer())/entitlements",
                                            bearer: token)
            #expect(answer.status == 401)
            #expect(answer.text == #"{"message":"Unauthenticated."}"#)
        }
    }

    @Test func aTokenWithoutTheGlobalScopeIsForbidden() async throws {
        try await APIHarness.with { api in
            let accountID = api.accountID
            let created = try await api.database.pool.transaction { db in
                try APIClients.add(accountID: accountID, name: "reports", scopes: ["read-reports"],
                                   sha256: { Digest.sha256($0) }, on: db)
            }
            let issued = try await api.requestToken([("grant_type", "client_credentials"), ("client_id", created.client.id),
                                                     ("client_secret", created.secret)])
            let token = try #require(try issued.json["access_token"] as? String)
            let answer = try await api.send("GET", "/api/v1/mobile-stores/customers/\(try await api.addCustomer())/entitlements",
                                            bearer: token)
            #expect(answer.status == 403)
            #expect(answer.text == #"{"message":"Invalid scope(s) provided."}"#)
        }
    }

    @Test(arguments: [nil, "Bearer", "Bearer not-a-token", "Basic abc", "Bearer " + String(repeating: "x", count: 600)])
    func aMissingOrInvalidTokenIsUnauthenticated(header: String?) async throws {
        try await APIHarness.with { api in
            let headers = header.map { [(name: "Authorization", value: $0)] } ?? []
            let answer = try await api.send("GET", "/api/v1/mobile-stores/customers/\(try await api.addCustomer())/entitlements",
                                            headers: headers)
            #expect(answer.status == 401)
            #expect(answer.text == #"{"message":"Unauthenticated."}"#)
            #expect(answer.header("www-authenticate")?.hasPrefix("Bearer") == true)
        }
    }

    @Test func anotherTenantsTokenIsUnauthenticated() async throws {
        try await APIHarness.with { api in
            let token = try await api.accessToken()
            _ = try await api.database.pool.transaction { db in try Catalog.addAccount(host: "other.test", on: db) }
            let answer = try await api.send("GET", "/api/v1/mobile-stores/customers/\(try await api.addCustomer())/entitlements",
                                            bearer: token, host: "other.test")
            #expect(answer.status == 401)
        }
    }
}
