import Accounts
import Foundation
import Postgres

struct AccountsCommand: Command {
    static let name = "accounts"
    static let summary = "add or list SubscriptionFlow accounts (tenants), found by their webhook host"
    static let usage = """
        usage: storesync accounts add --host H [--name N] [--json]
               storesync accounts list [--json]

        An account is found by the Host header its store notifications arrive on: webhooks for a host
        with no account get 404 and are not stored. H is a host name without port, e.g.
        billing.example.com (stored lowercase).
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        switch arguments.positional() {
        case "add"?:
            guard let given = try arguments.option("--host") else { throw UsageError("--host is required") }
            let givenName = try arguments.option("--name") ?? ""
            try arguments.finish()
            let host = try Parse.host(given, "--host")
            let name = try Parse.name(givenName, "--name", maxCharacters: 200)
            let id = try await environment.withPool { pool in
                try await pool.transaction { db in try AccountDirectory.addIfAbsent(host: host, name: name, on: db) }
            }
            guard let id else {
                FileHandle.standardError.write(Data("storesync accounts: an account for \(host) already exists\n".utf8))
                return 1
            }
            Output.print(json ? Output.Value.object([("id", .int(Int(id))), ("host", .string(host))]).text
                              : "account \(id) added for \(host)")
            return 0
        case "list"?:
            try arguments.finish()
            let accounts = try await environment.withPool { pool in
                try await pool.withConnection { db in try await AccountDirectory.list(on: db) }
            }
            if json {
                Output.print(Output.Value.array(accounts.map {
                    .object([("id", .int(Int($0.id))), ("host", .string($0.host)), ("name", .string($0.name)),
                             ("created_at", .string(Output.iso($0.createdAt)))])
                }).text)
            } else {
                Output.print(accounts.isEmpty ? "no accounts" : Output.table(
                    ["ID", "HOST", "NAME", "CREATED"],
                    accounts.map { [String($0.id), $0.host, $0.name, Output.iso($0.createdAt)] }))
            }
            return 0
        case let other?:
            throw UsageError("unknown action \(other.debugDescription); say add or list")
        case nil:
            throw UsageError("say add or list")
        }
    }
}
