import Accounts
import Crypto
import Foundation

struct APIClientsCommand: Command {
    static let name = "api-clients"
    static let summary = "add, list or revoke an account's Mobile Stores API clients (OAuth client credentials)"
    static let usage = """
        usage: storesync api-clients add --account A --name N [--scope S]… [--json]
               storesync api-clients list --account A [--json]
               storesync api-clients revoke CLIENT_ID

        add     prints the new client's client_id and client_secret. The secret is shown only this once: only
                its SHA-256 is kept. Scopes default to access-global-api, which the backend endpoints require.
        list    the account's clients, revoked ones included, never their secrets.
        revoke  the client stops authenticating at once, and the tokens issued to it stop working.
        A is an account id or the host its API is called on.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        switch arguments.positional() {
        case "add"?:
            guard let account = try arguments.option("--account") else { throw UsageError("--account is required") }
            guard let givenName = try arguments.option("--name") else { throw UsageError("--name is required") }
            let givenScopes = try arguments.options("--scope")
            try arguments.finish()
            let reference = try Parse.account(account)
            let name = try Parse.name(givenName, "--name", maxCharacters: 200)
            guard !name.isEmpty else { throw UsageError("--name must not be empty") }
            let scopes = givenScopes.isEmpty ? [APIClients.defaultScope] : givenScopes
            if let bad = scopes.first(where: { !APIClients.isValidScope($0) }) {
                throw UsageError("--scope \(Parse.quoted(bad)) is not a scope (printable ASCII, no space, quote or backslash)")
            }
            guard scopes.count <= 16 else { throw UsageError("at most 16 --scope") }
            let created = try await environment.withPool { pool in
                let accountID = try await reference.resolve(on: pool)
                return try await pool.transaction { db in
                    try APIClients.add(accountID: accountID, name: name, scopes: scopes, sha256: { Digest.sha256($0) }, on: db)
                }
            }
            let client = created.client
            Output.print(json ? Output.Value.object([
                ("client_id", .string(client.id)), ("client_secret", .string(created.secret)),
                ("account_id", .int(Int(client.accountID))), ("scopes", .array(client.scopes.map { .string($0) })),
            ]).text : """
                client_id      \(client.id)
                client_secret  \(created.secret)
                (the secret is shown only now; scopes: \(client.scopes.joined(separator: " ")))
                """)
            return 0
        case "list"?:
            guard let account = try arguments.option("--account") else { throw UsageError("--account is required") }
            try arguments.finish()
            let reference = try Parse.account(account)
            let clients = try await environment.withPool { pool in
                let accountID = try await reference.resolve(on: pool)
                return try await pool.withConnection { db in try await APIClients.list(accountID: accountID, on: db) }
            }
            if json {
                Output.print(Output.Value.array(clients.map { client in
                    .object([("client_id", .string(client.id)), ("name", .string(client.name)),
                             ("scopes", .array(client.scopes.map { .string($0) })),
                             ("created_at", .string(Output.iso(client.createdAt))),
                             ("revoked_at", client.revokedAt.map { .string(Output.iso($0)) } ?? .null)])
                }).text)
            } else {
                Output.print(clients.isEmpty ? "no API clients" : Output.table(
                    ["CLIENT ID", "NAME", "SCOPES", "CREATED", "REVOKED"],
                    clients.map { [$0.id, $0.name, $0.scopes.joined(separator: " "), Output.iso($0.createdAt),
                                   $0.revokedAt.map(Output.iso) ?? "-"] }))
            }
            return 0
        case "revoke"?:
            return try await SetupError.revoke("API client", &arguments, environment: environment,
                                               placeholder: "CLIENT_ID") { clientID, db in
                try APIClients.revoke(clientID: clientID, on: db)
            }
        case let other?:
            throw UsageError("unknown action \(Parse.quoted(other)); say add, list or revoke")
        case nil:
            throw UsageError("say add, list or revoke")
        }
    }
}
