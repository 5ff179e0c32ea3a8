import Accounts
import Foundation
import Postgres

struct AccountsCommand: Command {
    static let name = "accounts"
    static let summary = "add, list or limit SubscriptionFlow accounts (tenants), found by their webhook host"
    static let usage = """
        usage: storesync accounts add --host H [--name N] [--json]
               storesync accounts list [--json]
               storesync accounts set-api-rate-limit --account A N
               storesync accounts set-app-rate-limits --account A [--per-token N] [--failures-per-address M]

        An account is found by the Host header its store notifications arrive on: webhooks for a host
        with no account get 404 and are not stored. H is a host name without port, e.g.
        billing.example.com (stored lowercase).

        set-api-rate-limit  the account's Mobile Stores API budget: N backend requests per minute
                            (1…1000000, default 500), shared by every process serving the API.
                            A is an account id or host.
        set-app-rate-limits the app endpoints' limits, apart from that budget: N requests per minute per
                            account token (default 120), M failed authentications per minute per address
                            (default 60); each 1…1000000, an option left out keeps its limit.
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
                             ("created_at", .string(Output.iso($0.createdAt))), ("api_rate_limit", .int($0.apiRateLimit)),
                             ("app_token_rate_limit", .int($0.appTokenRateLimit)),
                             ("app_address_failure_limit", .int($0.appAddressFailureLimit))])
                }).text)
            } else {
                Output.print(accounts.isEmpty ? "no accounts" : Output.table(
                    ["ID", "HOST", "NAME", "CREATED", "API/MIN", "APP TOKEN/MIN", "APP FAILS/ADDR/MIN"],
                    accounts.map { [String($0.id), $0.host, $0.name, Output.iso($0.createdAt), String($0.apiRateLimit),
                                    String($0.appTokenRateLimit), String($0.appAddressFailureLimit)] }))
            }
            return 0
        case "set-api-rate-limit"?:
            guard let account = try arguments.option("--account") else { throw UsageError("--account is required") }
            guard let text = arguments.positional() else { throw UsageError("say the requests per minute, e.g. 500") }
            try arguments.finish()
            let limit = try Parse.int(text, "the requests per minute", range: 1...1_000_000)
            let reference = try Parse.account(account)
            try await environment.withPool { pool in
                let accountID = try await reference.resolve(on: pool)
                try await pool.transaction { db in try AccountDirectory.setAPIRateLimit(limit, accountID: accountID, on: db) }
            }
            Output.print("account \(account): \(limit) API requests per minute")
            return 0
        case "set-app-rate-limits"?:
            guard let account = try arguments.option("--account") else { throw UsageError("--account is required") }
            let perToken = try arguments.option("--per-token").map { try Parse.int($0, "--per-token", range: 1...1_000_000) }
            let perAddress = try arguments.option("--failures-per-address").map {
                try Parse.int($0, "--failures-per-address", range: 1...1_000_000)
            }
            try arguments.finish()
            guard perToken != nil || perAddress != nil else {
                throw UsageError("say --per-token N, --failures-per-address M or both")
            }
            let reference = try Parse.account(account)
            try await environment.withPool { pool in
                let accountID = try await reference.resolve(on: pool)
                try await pool.transaction { db in
                    try AccountDirectory.setAppRateLimits(perToken: perToken, failuresPerAddress: perAddress,
                                                          accountID: accountID, on: db)
                }
            }
            let said = [perToken.map { "\($0) app requests per minute per token" },
                        perAddress.map { "\($0) failed app authentications per minute per address" }].compactMap { $0 }
            Output.print("account \(account): " + said.joined(separator: ", "))
            return 0
        case let other?:
            throw UsageError("unknown action \(other.debugDescription); say add, list, set-api-rate-limit or set-app-rate-limits")
        case nil:
            throw UsageError("say add, list, set-api-rate-limit or set-app-rate-limits")
        }
    }
}
