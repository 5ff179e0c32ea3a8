import Crypto
import Foundation
import TestSupport
import Testing

/// `storesync api-clients`: the operator's way to give a backend Mobile Stores API credentials, run as an
/// operator runs it.
@Suite struct APIClientsCLITests {
    @Test func aClientIsAddedWithItsSecretShownOnceListedWithoutItAndRevoked() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
                try await ChildProcess.run("storesync", arguments, environment: env)
            }
            #expect(try await run(["accounts", "add", "--host", "billing.example.com"]).status == 0)
            let added = try await run(["api-clients", "add", "--account", "billing.example.com", "--name", "backend", "--json"])
            #expect(added.status == 0, "\(added.stderr)")
            let client = try jsonObject(added.stdout)
            let clientID = try #require(client["client_id"] as? String)
            let secret = try #require(client["client_secret"] as? String)
            #expect(secret.count == 48 && client["scopes"] as? [String] == ["access-global-api"])
            let hash = try await database.pool.query("SELECT secret_sha256 FROM api_clients WHERE id = $1::uuid", [clientID])
            #expect(try hash[0].decode(0, as: Data.self) == Digest.sha256(Data(secret.utf8)))

            let scoped = try await run(["api-clients", "add", "--account", "1", "--name", "reports", "--scope", "read",
                                        "--scope", "access-global-api"])
            #expect(scoped.status == 0, "\(scoped.stderr)")
            #expect(scoped.stdout.contains("client_secret  ") && scoped.stdout.contains("scopes: read access-global-api"))

            let listed = try await run(["api-clients", "list", "--account", "billing.example.com", "--json"])
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(!listed.stdout.contains(secret), "a listing never shows a secret")
            let clients = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
            #expect(clients.map { $0["name"] as? String } == ["backend", "reports"])
            #expect(clients.map { $0["revoked_at"] is NSNull } == [true, true])

            let revoked = try await run(["api-clients", "revoke", clientID.uppercased()])
            #expect(revoked.status == 0 && revoked.stdout == "API client \(clientID) revoked\n", "\(revoked.stderr)")
            #expect(try await run(["api-clients", "revoke", clientID]).status == 0, "revoking twice is fine")
            let table = try await run(["api-clients", "list", "--account", "billing.example.com"])
            #expect(table.stdout.hasPrefix("CLIENT ID") && table.stdout.contains(clientID))
            #expect(try await database.pool.query("SELECT count(*) FROM api_clients WHERE revoked_at IS NOT NULL")[0]
                .decode(0, as: Int.self) == 1)

            let unknown = try await run(["api-clients", "revoke", "7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e"])
            #expect(unknown.status == 1)
            #expect(unknown.stderr == "storesync api-clients: error: no API client 7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e\n")
            let nobody = try await run(["api-clients", "add", "--account", "nobody.example.com", "--name", "x"])
            #expect(nobody.status == 1)
            #expect(nobody.stderr == "storesync api-clients: error: no account for host nobody.example.com\n")
        }
    }

    @Test(arguments: [
        (["add", "--name", "x"], "--account is required"),
        (["add", "--account", "1"], "--name is required"),
        (["add", "--account", "1", "--name", ""], "--name must not be empty"),
        (["add", "--account", "1", "--name", "x", "--scope", "two words"], "--scope \"two words\" is not a scope"),
        (["list"], "--account is required"),
        (["revoke"], "revoke needs a CLIENT_ID"),
        (["revoke", "nope"], "CLIENT_ID must be a UUID"),
        (["rotate"], "unknown action \"rotate\"; say add, list or revoke"),
        ([], "say add, list or revoke"),
    ])
    func badArgumentsAreRefusedBeforeAnyDatabaseIsReached(arguments: [String], message: String) async throws {
        let result = try await ChildProcess.run("storesync", ["api-clients"] + arguments,
                                                environment: ["DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }
}
