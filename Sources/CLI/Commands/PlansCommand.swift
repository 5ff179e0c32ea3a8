import Accounts
import Foundation
import StoreModel

struct PlansCommand: Command {
    static let name = "plans"
    static let summary = "add a plan price (and its plan and entitlements) that store products map to"
    static let usage = """
        usage: storesync plans add --account A --plan CODE --price CODE --amount 9.99 --currency USD
                                   [--period P1M] [--entitlement KEY]… [--json]

        Creates plan CODE in account A (its id or webhook host) when missing, grants it each entitlement KEY,
        and adds its price CODE — or updates that price when it exists. Prints the plan price's id, which
        `storesync products map --plan-price` takes.

          --amount     exact decimal in the currency's units: 9.99 USD, 1200 JPY, 1.234 KWD (never rounded)
          --period     ISO 8601 billing period of one unit (D, W, M or Y) counted 1…999: P7D, P1W, P1M, P3M,
                       P1Y… (default P1M)
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        switch arguments.positional() {
        case "add"?:
            guard let account = try arguments.option("--account") else { throw UsageError("--account is required") }
            guard let plan = try arguments.option("--plan") else { throw UsageError("--plan CODE is required") }
            guard let price = try arguments.option("--price") else { throw UsageError("--price CODE is required") }
            guard let amount = try arguments.option("--amount") else { throw UsageError("--amount is required") }
            guard let currency = try arguments.option("--currency") else { throw UsageError("--currency is required") }
            let period = try arguments.option("--period") ?? "P1M"
            let entitlements = try arguments.options("--entitlement")
            try arguments.finish()
            let reference = try Parse.account(account)
            let planCode = try Parse.code(plan, "--plan")
            let priceCode = try Parse.code(price, "--price")
            let money = try Parse.amount(amount, currency: try Parse.currency(currency))
            // One unit with a count of 1…999: P0M bills never, and P1M1M is no period anyone means.
            guard Parse.matches(period, "P[1-9][0-9]{0,2}[DWMY]") else {
                throw UsageError("--period must be an ISO 8601 period of one unit with a count of 1…999, like P7D, P1W, P1M, "
                                 + "P3M or P1Y, got \(Parse.quoted(period))")
            }
            guard entitlements.count <= 100 else { throw UsageError("at most 100 --entitlement keys") }
            let keys = try entitlements.map { try Parse.code($0, "--entitlement") }
            let id = try await environment.withPool { pool in
                let accountID = try await reference.resolve(on: pool)
                return try await pool.transaction { db in
                    try Catalog.addPlanPrice(accountID: accountID, planCode: planCode, priceCode: priceCode, amount: money,
                                             period: period, entitlements: keys, on: db)
                }
            }
            Output.print(json ? Output.Value.object([
                ("id", .int(Int(id))), ("plan", .string(planCode)), ("price", .string(priceCode)),
                ("amount_minor", .int(Int(money.minorUnits))), ("currency", .string(money.currency)), ("period", .string(period)),
            ]).text : "plan price \(id): \(planCode)/\(priceCode) \(money) every \(period)")
            return 0
        case let other?:
            throw UsageError("unknown action \(Parse.quoted(other)); say add")
        case nil:
            throw UsageError("say add")
        }
    }
}
