import Foundation
import Mirror

struct CustomersCommand: Command {
    static let name = "customers"
    static let summary = "add a SubscriptionFlow customer (for account tokens and linking)"
    static let usage = """
        usage: storesync customers add --account A [--email E] [--name N] [--json]

        Adds a customer to account A (its id or webhook host) and prints the customer's id, a UUID, which
        `storesync tokens issue --customer` takes.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        switch arguments.positional() {
        case "add"?:
            guard let account = try arguments.option("--account") else { throw UsageError("--account is required") }
            let email = try arguments.option("--email")
            let givenName = try arguments.option("--name") ?? ""
            try arguments.finish()
            let reference = try Parse.account(account)
            if let email {
                guard email.utf8.count <= 320, email.range(of: "^[^@\\s]+@[^@\\s]+$", options: .regularExpression) != nil else {
                    throw UsageError("--email must be an address like name@example.com of at most 320 bytes, got \(Parse.quoted(email))")
                }
            }
            let name = try Parse.name(givenName, "--name", maxCharacters: 200)
            let id = try await environment.withPool { pool in
                let accountID = try await reference.resolve(on: pool)
                return try await pool.transaction { db in
                    try Catalog.addCustomer(accountID: accountID, email: email, name: name, on: db)
                }
            }
            Output.print(json ? Output.Value.object([("id", .string(id))]).text : "customer \(id) added")
            return 0
        case let other?:
            throw UsageError("unknown action \(Parse.quoted(other)); say add")
        case nil:
            throw UsageError("say add")
        }
    }
}
