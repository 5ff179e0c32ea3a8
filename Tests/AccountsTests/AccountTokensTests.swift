import Crypto
import Foundation
import Accounts
import Postgres
import TestSupport
import Testing

/// Issuing, reusing, rotating and revoking account tokens as the spec's Account Tokens section says: the
/// secret is shown once and only its SHA-256 is kept.
@Suite struct AccountTokensTests {
    @Test func theFirstIssueReturnsASecretAndStoresOnlyItsHash() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let customer = try await fixture.addCustomer()
            let issued = try await fixture.issueToken(for: customer)

            #expect(!issued.reused)
            #expect(UUID(uuidString: issued.token) != nil && issued.token == issued.token.lowercased())
            let secret = try #require(issued.secret)
            #expect(secret.count == 48 && secret.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
            let row = try await fixture.rows("""
                SELECT customer_id::text, account_id, secret_sha256, status, revoked_at, position($2 IN t::text)
                FROM account_tokens t WHERE token = $1::uuid
                """, [issued.token, secret])[0]
            #expect(try row.decode(0, as: String.self) == customer)
            #expect(try row.decode(1, as: Int64.self) == fixture.accountID)
            #expect(try row.decode(2, as: Data.self) == Digest.sha256(Data(secret.utf8)))
            #expect(try row.decode(3, as: String.self) == "active" && row.text(4) == nil)
            #expect(try row.decode(5, as: Int.self) == 0, "the secret itself appears nowhere in the row")
        }
    }

    /// 40 rotations draw 1,920 letters: a letter the generator could never pick (an off-by-one in the
    /// rejection, or a bias that starves the alphabet's end) would be missing with certainty, while a fair
    /// draw misses one of the 62 with probability about 2 × 10⁻¹².
    @Test func secretsAreDistinctAndDrawFromTheWholeAlphabet() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let customer = try await fixture.addCustomer()
            var secrets: [String] = []
            for _ in 0..<40 {
                secrets.append(try #require(try await fixture.issueToken(for: customer, rotate: true).secret))
            }
            #expect(Set(secrets).count == secrets.count)
            #expect(secrets.allSatisfy { $0.count == 48 })
            let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
            #expect(Set(secrets.joined()) == alphabet)
        }
    }

    @Test func issuingAgainReusesTheActiveTokenWithoutItsSecret() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let customer = try await fixture.addCustomer()
            let first = try await fixture.issueToken(for: customer)
            let second = try await fixture.issueToken(for: customer)
            #expect(second.token == first.token && second.secret == nil && second.reused)
            #expect(try await fixture.count("SELECT count(*) FROM account_tokens") == 1)
        }
    }

    @Test func concurrentFirstIssuesAgreeOnOneToken() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let customer = try await fixture.addCustomer()
            let results = try await withThrowingTaskGroup(of: AccountTokens.Issued.self) { group in
                for _ in 0..<4 { group.addTask { try await fixture.issueToken(for: customer) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(results.map(\.token)).count == 1)
            #expect(results.filter { !$0.reused && $0.secret != nil }.count == 1)
            #expect(try await fixture.count("SELECT count(*) FROM account_tokens") == 1)
        }
    }

    @Test func rotatingRevokesEveryActiveTokenAndIssuesANewPair() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let customer = try await fixture.addCustomer()
            let old = try await fixture.issueToken(for: customer)
            let rotated = try await fixture.issueToken(for: customer, rotate: true)
            #expect(rotated.token != old.token && rotated.secret != nil && rotated.secret != old.secret && !rotated.reused)

            let states = try await fixture.rows("""
                SELECT token::text, status, (revoked_at IS NOT NULL)::text FROM account_tokens
                """).map { try [$0.decode(0, as: String.self), $0.decode(1, as: String.self), $0.decode(2, as: String.self)] }
            #expect(Set(states) == [[old.token, "revoked", "true"], [rotated.token, "active", "false"]])
            let reuse = try await fixture.issueToken(for: customer)
            #expect(reuse.token == rotated.token && reuse.reused && reuse.secret == nil)
        }
    }

    @Test func revokingIsIdempotentAndAfterwardsANewTokenIsIssued() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let customer = try await fixture.addCustomer()
            let issued = try await fixture.issueToken(for: customer)
            let token = issued.token
            #expect(try await fixture.revoke(token))
            let revokedAt: Date = try await fixture.rows("SELECT revoked_at FROM account_tokens")[0].decode(0)
            #expect(try await fixture.revoke(token))
            #expect(try await fixture.rows("SELECT revoked_at FROM account_tokens")[0].decode(0, as: Date.self) == revokedAt)

            let next = try await fixture.issueToken(for: customer)
            #expect(next.token != token && next.secret != nil && !next.reused)
        }
    }

    @Test(arguments: ["7d1e0a54-84a4-4b8a-a6f5-5c0a5f8a9e21", "not-a-token", ""])
    func revokingWhatWasNeverIssuedReportsFalse(token: String) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            _ = try await fixture.issueToken(for: fixture.addCustomer())
            let revoked = try await fixture.revoke(token)
            #expect(!revoked)
            #expect(try await fixture.count("SELECT count(*) FROM account_tokens WHERE status = 'active'") == 1)
        }
    }

    /// What `tokens issue` keeps by locking the customer, the database keeps too: written past it, a second active
    /// token of one customer, or a token filed under another account than its customer's, is refused.
    @Test(arguments: [("second active token", "account_tokens_one_active_idx"),
                      ("another account", "account_tokens_customer_account_fkey")])
    func theDatabaseKeepsTheTokenRules(case name: String, constraint: String) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let customer = try await fixture.addCustomer()
            _ = try await fixture.issueToken(for: customer)
            let account: Int64 = name == "another account"
                ? try await database.pool.query("INSERT INTO accounts (host) VALUES ('other.example.com') RETURNING id")[0]
                    .decode(0)
                : fixture.accountID
            let status = name == "another account" ? "revoked" : "active"
            let error = await #expect(throws: PostgresError.self) {
                try await database.pool.query("""
                    INSERT INTO account_tokens (token, account_id, customer_id, secret_sha256, status)
                    VALUES (gen_random_uuid(), $1, $2::uuid, sha256('x'), $3)
                    """, [account, customer, status])
            }
            #expect(error?.constraint == constraint, "\(String(describing: error))")
            #expect(try await fixture.count("SELECT count(*) FROM account_tokens") == 1)
        }
    }

    @Test(arguments: ["7d1e0a54-84a4-4b8a-a6f5-5c0a5f8a9e21", "not-a-uuid", "'; DROP TABLE customers; --"])
    func issuingForAnUnknownCustomerFails(customer: String) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let error = await #expect(throws: AccountsError.self) { try await fixture.issueToken(for: customer) }
            #expect(error?.code == .unknownCustomer)
            #expect(try await fixture.count("SELECT count(*) FROM account_tokens") == 0)
        }
    }
}
