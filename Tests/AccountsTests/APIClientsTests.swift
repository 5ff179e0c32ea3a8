import Accounts
import Crypto
import Foundation
import Postgres
import TestSupport
import Testing

/// The Mobile Stores API's backend clients: created with a secret shown once and kept only as its SHA-256,
/// listed without it, revoked for good; the API's role reads what checking a secret needs and nothing else.
@Suite struct APIClientsTests {
    private static func add(_ fixture: AccountFixture, name: String = "backend",
                            scopes: [String] = [APIClients.defaultScope]) async throws -> APIClients.Created {
        let accountID = fixture.accountID
        return try await fixture.database.pool.transaction { db in
            try APIClients.add(accountID: accountID, name: name, scopes: scopes, sha256: { Digest.sha256($0) }, on: db)
        }
    }

    @Test func aNewClientGetsAnIdAndASecretOfWhichOnlyTheHashIsKept() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let created = try await Self.add(fixture, scopes: ["access-global-api", "read", "access-global-api"])
            #expect(UUID(uuidString: created.client.id) != nil && created.client.id == created.client.id.lowercased())
            #expect(created.secret.count == 48 && created.secret.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
            #expect(created.client.scopes == ["access-global-api", "read"], "duplicates dropped, order kept")
            #expect(created.client.accountID == fixture.accountID && created.client.revokedAt == nil)
            let stored = try await fixture.rows("SELECT secret_sha256 FROM api_clients WHERE id = $1::uuid", [created.client.id])
            #expect(try stored[0].decode(0, as: Data.self) == Digest.sha256(Data(created.secret.utf8)))
            let other = try await Self.add(fixture)
            #expect(other.client.id != created.client.id && other.secret != created.secret)
        }
    }

    @Test func listingShowsTheAccountsClientsOldestFirstRevokedOnesIncluded() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let elsewhere = try await AccountFixture.make(database, host: "other.example.com")
            let first = try await Self.add(fixture, name: "first")
            let second = try await Self.add(fixture, name: "second")
            _ = try await Self.add(elsewhere, name: "theirs")
            let (revoked, again, unknown, notUUID) = try await database.pool.transaction { db in
                (try APIClients.revoke(clientID: first.client.id, on: db), try APIClients.revoke(clientID: first.client.id, on: db),
                 try APIClients.revoke(clientID: UUID().uuidString, on: db), try APIClients.revoke(clientID: "nope", on: db))
            }
            #expect(revoked && again && !unknown && !notUUID)
            let accountID = fixture.accountID
            let listed = try await database.pool.transaction { db in try APIClients.list(accountID: accountID, on: db) }
            #expect(listed.map(\.name) == ["first", "second"])
            #expect(listed.map(\.id) == [first.client.id, second.client.id])
            #expect(listed[0].revokedAt != nil && listed[1].revokedAt == nil)
        }
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let scopes: [String]
        let message: String
        var testDescription: String { message }
    }

    @Test(arguments: [
        Refusal(name: "", scopes: ["access-global-api"], message: "a client's name is 1…200 characters"),
        Refusal(name: String(repeating: "n", count: 201), scopes: ["access-global-api"],
                message: "a client's name is 1…200 characters"),
        Refusal(name: "backend", scopes: [], message: "a client has 1…16 scopes"),
        Refusal(name: "backend", scopes: (0..<17).map { "s\($0)" }, message: "a client has 1…16 scopes"),
        Refusal(name: "backend", scopes: ["two words"], message: #"scope "two words" is not a scope token"#),
        Refusal(name: "backend", scopes: ["quo\"te"], message: #"scope "quo\"te" is not a scope token"#),
        Refusal(name: "backend", scopes: [String(repeating: "s", count: 101)],
                message: "scope \"\(String(repeating: "s", count: 101))\" is not a scope token"),
    ])
    func anInvalidNameOrScopeIsRefusedAndNothingIsWritten(_ refusal: Refusal) async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let error = await #expect(throws: AccountsError.self) {
                try await Self.add(fixture, name: refusal.name, scopes: refusal.scopes)
            }
            #expect(error?.code == .invalidClient && error?.message == refusal.message)
            #expect(try await fixture.count("SELECT count(*) FROM api_clients") == 0)
        }
    }

    @Test(arguments: ["access-global-api", "a", "read:entitlements", "!#[]~"], ["", " ", "a b", "\"", "\\", "é", "tab\t"])
    func scopeTokensAreRFC6749s(valid: String, invalid: String) {
        #expect(APIClients.isValidScope(valid))
        #expect(!APIClients.isValidScope(invalid))
    }

    /// The API checks a client's secret, scopes and account; it can read no client's name, list nothing else,
    /// and change nothing.
    @Test func theAPIRoleReadsWhatCheckingASecretNeedsAndWritesNothing() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let created = try await Self.add(fixture)
            let role = try await TestRole.create(memberOf: "storesync_api", for: database)
            let connection = try await PostgresConnection.connect(url: role.url)
            let row = try await connection.query("""
                SELECT a.host, array_to_string(c.scopes, ' '), c.secret_sha256, c.revoked_at IS NULL
                FROM api_clients c JOIN accounts a ON a.id = c.account_id WHERE c.id = $1::uuid
                """, [created.client.id])
            #expect(try row[0].decode(0, as: String.self) == "billing.example.com")
            #expect(try row[0].decode(1, as: String.self) == "access-global-api")
            for refused in ["SELECT name FROM api_clients", "UPDATE api_clients SET revoked_at = now()",
                            "DELETE FROM api_clients", "SELECT email FROM customers"] {
                let error = await #expect(throws: PostgresError.self) { try await connection.query(refused) }
                #expect(error?.sqlState == "42501", "\(refused): \(error.map(String.init(describing:)) ?? "allowed")")
            }
            await connection.close()
            await role.drop()
        }
    }
}
