import Accounts
import Foundation
import Mirror

struct CustomersCommand: Command {
    static let name = "customers"
    static let summary = "add a SubscriptionFlow customer; show one's subscriptions and entitlements"
    static let usage = """
        usage: storesync customers add --account A [--email E] [--name N] [--json]
               storesync customers show CUSTOMER

        add   adds a customer to account A (its id or webhook host) and prints the customer's id, a UUID, which
              `storesync tokens issue --customer` takes.
        show  prints, as JSON, the customer's subscriptions from every source and the entitlements they grant
              now by the product spec's rules (store subscriptions follow the store: active until its expiry,
              grace until its grace end; on hold, paused, expired and revoked grant nothing).
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
                guard email.utf8.count <= 320, Parse.matches(email, "[^@\\s]+@[^@\\s]+") else {
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
        case "show"?:
            guard let text = arguments.positional() else { throw UsageError("show needs a CUSTOMER id") }
            try arguments.finish()
            let customerID = try Parse.uuid(text, "CUSTOMER")
            let summary = try await environment.withPool { pool in
                try await CustomerSummary.read(customerID: customerID, pool: pool)
            }
            guard let summary else { throw SetupError(.notFound, "no customer \(customerID)") }
            Output.print(details(summary).text)
            return 0
        case let other?:
            throw UsageError("unknown action \(Parse.quoted(other)); say add or show")
        case nil:
            throw UsageError("say add or show")
        }
    }

    private static func details(_ summary: CustomerSummary) -> Output.Value {
        .object([
            ("id", .string(summary.customerID)), ("account_id", .int(Int(summary.accountID))),
            ("email", summary.email.map { .string($0) } ?? .null), ("name", .string(summary.name)),
            ("subscriptions", .array(summary.subscriptions.map(\.json))),
            ("entitlements", .array(summary.entitlements.map(\.json))),
        ])
    }
}
