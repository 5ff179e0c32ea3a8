import Accounts
import Crypto
import Foundation

struct TokensCommand: Command {
    static let name = "tokens"
    static let summary = "issue, rotate or revoke a customer's account token"
    static let usage = """
        usage: storesync tokens issue --customer C [--rotate]
               storesync tokens revoke TOKEN

        issue   prints {"account_token": …, "client_secret": …, "reused": …}. A customer with an active
                token gets it back with "reused": true and "client_secret": null — the secret is shown only
                once, when issued, and only its SHA-256 is kept. --rotate revokes the active token and
                issues a new one.
        revoke  the token stops authenticating the app; purchases tagged with it still link to its customer.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        switch arguments.positional() {
        case "issue"?:
            guard let customer = try arguments.option("--customer") else { throw UsageError("--customer is required") }
            let rotate = arguments.flag("--rotate")
            try arguments.finish()
            let customerID = try Parse.uuid(customer, "--customer")
            let issued = try await environment.withPool { pool in
                try await pool.transaction { db in
                    try AccountTokens.issue(customerID: customerID, rotate: rotate, sha256: { Digest.sha256($0) }, on: db)
                }
            }
            Output.print(Output.Value.object([
                ("account_token", .string(issued.token)), ("client_secret", issued.secret.map { .string($0) } ?? .null),
                ("reused", .bool(issued.reused)),
            ]).text)
            return 0
        case "revoke"?:
            return try await SetupError.revoke("account token", &arguments, environment: environment,
                                               placeholder: "TOKEN") { token, db in
                try AccountTokens.revoke(token: token, on: db)
            }
        case let other?:
            throw UsageError("unknown action \(Parse.quoted(other)); say issue or revoke")
        case nil:
            throw UsageError("say issue or revoke")
        }
    }
}
