import Accounts
import Crypto
import Foundation
import TestSupport
import Testing

/// `POST /api/v1/mobile-stores/account-tokens` and `DELETE /api/v1/mobile-stores/account-tokens/{accountToken}`
/// as the reference's Account Tokens section describes them: issue (201, the secret shown once), reuse (200,
/// no secret), rotate (201, every active token revoked) and idempotent revoke, for the host's customers only.
@Suite struct AccountTokenEndpointTests {
    static let path = "/api/v1/mobile-stores/account-tokens"

    static func issue(_ customer: String, rotate: Bool? = nil) -> String {
        #"{"customer_id":"\#(customer)""# + (rotate.map { #","rotate":\#($0)"# } ?? "") + "}"
    }

    /// A customer of a second account, on another host, as the test database's owner.
    static func foreignCustomer(_ api: APIHarness) async throws -> String {
        try await api.database.pool.transaction { db in
            let other = try Catalog.addAccount(host: "other.test", on: db)
            return try Catalog.addCustomer(accountID: other, on: db)
        }
    }

    /// The first issue answers 201 with the pair; only the secret's SHA-256 is kept, so the secret can never be
    /// shown again.
    @Test func theFirstIssueAnswers201WithATokenAndASecretKeptOnlyAsItsHash() async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let answer = try await api.send("POST", Self.path, json: Self.issue(customer), bearer: try await api.accessToken())
            #expect(answer.status == 201, "\(answer.text)")
            let json = try answer.json
            let token = try #require(json["account_token"] as? String)
            let secret = try #require(json["client_secret"] as? String)
            #expect(UUID(uuidString: token) != nil && token == token.lowercased())
            #expect(secret.count == 48)
            #expect(json["reused"] as? Bool == false)
            let row = try await api.database.pool.query(
                "SELECT customer_id::text, account_id, status, secret_sha256 FROM account_tokens WHERE token = $1::uuid", [token])
            #expect(row.count == 1)
            #expect(try row[0].decode(0, as: String.self) == customer)
            #expect(try row[0].decode(1, as: Int64.self) == api.accountID)
            #expect(try row[0].decode(2, as: String.self) == "active")
            #expect(try row[0].decode(3, as: Data.self) == Digest.sha256(Data(secret.utf8)))
        }
    }

    /// Issuing without rotate is idempotent: the active token comes back, without a secret it no longer has.
    @Test func issuingAgainReusesTheActiveTokenWithoutItsSecret() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let first = try await api.send("POST", Self.path, json: Self.issue(customer), bearer: bearer)
            let again = try await api.send("POST", Self.path, json: Self.issue(customer, rotate: false), bearer: bearer)
            #expect(first.status == 201, "\(first.text)")
            #expect(again.status == 200, "\(again.text)")
            let json = try again.json
            #expect(json["account_token"] as? String == (try first.json["account_token"] as? String))
            #expect(json["client_secret"] is NSNull, "the secret is shown once: \(again.text)")
            #expect(json["reused"] as? Bool == true)
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens WHERE customer_id = $1::uuid", [customer],
                                         as: Int.self) == 1)
        }
    }

    @Test func rotatingRevokesTheOldTokenAndIssuesANewPair() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let first = try await api.send("POST", Self.path, json: Self.issue(customer), bearer: bearer)
            let old = try #require(try first.json["account_token"] as? String)
            let oldSecret = try #require(try first.json["client_secret"] as? String)
            let rotated = try await api.send("POST", Self.path, json: Self.issue(customer, rotate: true), bearer: bearer)
            #expect(rotated.status == 201, "\(rotated.text)")
            let json = try rotated.json
            let new = try #require(json["account_token"] as? String)
            let secret = try #require(json["client_secret"] as? String)
            #expect(new != old && secret != oldSecret)
            #expect(secret.count == 48)
            #expect(json["reused"] as? Bool == false)
            #expect(try await api.scalar("SELECT status FROM account_tokens WHERE token = $1::uuid", [old], as: String.self)
                == "revoked")
            #expect(try await api.scalar("SELECT revoked_at IS NOT NULL FROM account_tokens WHERE token = $1::uuid", [old],
                                         as: Bool.self) == true)
            #expect(try await api.scalar("SELECT status FROM account_tokens WHERE token = $1::uuid", [new], as: String.self)
                == "active")
            let reused = try await api.send("POST", Self.path, json: Self.issue(customer), bearer: bearer)
            #expect(try reused.json["account_token"] as? String == new, "the new token is the one reused")
        }
    }

    /// Revoking is idempotent: the second call answers as the first, and the revocation's time stays the first's.
    @Test func revokingTwiceAnswers200BothTimes() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.customerWithToken()
            let token = customer.token.uuidString.lowercased()
            let first = try await api.send("DELETE", Self.path + "/" + token, bearer: bearer)
            #expect(first.status == 200, "\(first.text)")
            #expect(try first.json["account_token"] as? String == token)
            #expect(try first.json["revoked"] as? Bool == true)
            #expect(try await api.scalar("SELECT status FROM account_tokens WHERE token = $1::uuid", [token], as: String.self)
                == "revoked")
            let revokedAt = try await api.scalar("SELECT revoked_at::text FROM account_tokens WHERE token = $1::uuid", [token],
                                                 as: String.self)
            let second = try await api.send("DELETE", Self.path + "/" + token, bearer: bearer)
            #expect(second.status == 200, "\(second.text)")
            #expect(try second.json["revoked"] as? Bool == true)
            #expect(try await api.scalar("SELECT revoked_at::text FROM account_tokens WHERE token = $1::uuid", [token],
                                         as: String.self) == revokedAt)
        }
    }

    /// An unknown token, or a path segment that is no token at all, is not found.
    @Test(arguments: ["7d0c6d0e-0000-4000-8000-000000000000", "not-a-token"])
    func revokingAnUnknownTokenIsNotFound(token: String) async throws {
        try await APIHarness.with { api in
            let answer = try await api.send("DELETE", Self.path + "/" + token, bearer: try await api.accessToken())
            #expect(answer.status == 404, "\(answer.text)")
            #expect(answer.text == #"{"status":false,"message":"Account token not found"}"#)
        }
    }

    /// Another tenant's token is as unknown as a made-up one, and stays active.
    @Test func aTokenOfAnotherAccountsCustomerCannotBeRevoked() async throws {
        try await APIHarness.with { api in
            let foreign = try await Self.foreignCustomer(api)
            let issued = try await api.database.pool.transaction { db in
                try AccountTokens.issue(customerID: foreign, sha256: { Digest.sha256($0) }, on: db)
            }
            let answer = try await api.send("DELETE", Self.path + "/" + issued.token, bearer: try await api.accessToken())
            #expect(answer.status == 404, "\(answer.text)")
            #expect(try answer.json["message"] as? String == "Account token not found")
            #expect(try await api.scalar("SELECT status FROM account_tokens WHERE token = $1::uuid", [issued.token],
                                         as: String.self) == "active")
        }
    }

    /// A customer of another account is "Customer not found" on `customer_id`, as one that does not exist is;
    /// nothing is issued.
    @Test func aCustomerOfAnotherAccountIsNotFound() async throws {
        try await APIHarness.with { api in
            let foreign = try await Self.foreignCustomer(api)
            for rotate in [false, true] {
                let answer = try await api.send("POST", Self.path, json: Self.issue(foreign, rotate: rotate),
                                                bearer: try await api.accessToken())
                #expect(answer.status == 422, "\(answer.text)")
                let json = try answer.json
                #expect(json["status"] as? Bool == false)
                #expect(json["message"] as? String == "Customer not found")
                #expect(json["errors"] as? [String: [String]] == ["customer_id": ["Customer not found"]])
            }
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens", as: Int.self) == 0)
        }
    }

    /// Field rules: the answer lists every failing field under `errors`, and `message` is the first failure's.
    @Test(arguments: [
        (#"{}"#, ["customer_id": ["customer_id is required"]], "customer_id is required"),
        (#"{"customer_id":null}"#, ["customer_id": ["customer_id is required"]], "customer_id is required"),
        (#"{"customer_id":""}"#, ["customer_id": ["customer_id is required"]], "customer_id is required"),
        (#"{"customer_id":42}"#, ["customer_id": ["customer_id must be a string"]], "customer_id must be a string"),
        (#"{"customer_id":["C"]}"#, ["customer_id": ["customer_id must be a string"]], "customer_id must be a string"),
        (#"{"customer_id":"not-a-uuid"}"#, ["customer_id": ["Customer not found"]], "Customer not found"),
        (#"{"customer_id":"00000000-0000-4000-8000-000000000000"}"#, ["customer_id": ["Customer not found"]],
         "Customer not found"),
        (#"{"customer_id":"C","rotate":"yes"}"#, ["rotate": ["rotate must be true or false"]], "rotate must be true or false"),
        (#"{"customer_id":"C","rotate":1}"#, ["rotate": ["rotate must be true or false"]], "rotate must be true or false"),
        // A number that is not an integer is a value of the wrong kind, not malformed JSON.
        (#"{"customer_id":"C","rotate":0.5}"#, ["rotate": ["rotate must be true or false"]], "rotate must be true or false"),
        (#"{"rotate":"yes"}"#, ["customer_id": ["customer_id is required"], "rotate": ["rotate must be true or false"]],
         "customer_id is required"),
    ] as [(String, [String: [String]], String)])
    func validatesEveryField(body: String, errors: [String: [String]], message: String) async throws {
        try await APIHarness.with { api in
            let answer = try await api.sendForNewCustomer("POST", Self.path, template: body)
            #expect(answer.status == 422, "\(answer.text)")
            let json = try answer.json
            #expect(json["status"] as? Bool == false)
            #expect(json["message"] as? String == message)
            #expect(json["errors"] as? [String: [String]] == errors, "\(answer.text)")
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens", as: Int.self) == 0)
        }
    }

    /// Both endpoints charge the account's budget, so their answers carry its headers.
    @Test func answersCarryTheBudgetsHeaders() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.customerWithToken()
            let answers = [
                try await api.send("POST", Self.path, json: Self.issue(customer.id), bearer: bearer),
                try await api.send("POST", Self.path, json: "{}", bearer: bearer),
                try await api.send("DELETE", Self.path + "/" + customer.token.uuidString, bearer: bearer),
                try await api.send("DELETE", Self.path + "/" + UUID().uuidString, bearer: bearer),
            ]
            #expect(answers.map(\.status) == [200, 422, 200, 404])
            for answer in answers {
                #expect(answer.header("x-ratelimit-limit") == "500")
                #expect(answer.header("x-ratelimit-remaining").flatMap(Int.init) != nil)
            }
        }
    }
}
