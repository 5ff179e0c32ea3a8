import Accounts
import Foundation
import Mirror
import Postgres
import StoreModel

struct ProductsCommand: Command {
    static let name = "products"
    static let summary = "map store products to plan prices, list a connection's mappings"
    static let usage = """
        usage: storesync products map --connection C --product P [--base-plan B] --plan-price X [--json]
               storesync products list --connection C [--json]

        Purchases of store product P (and, on Google Play, base plan B) through connection C mirror into plan
        price X, which must belong to the connection's account. --base-plan is required on a Google Play
        connection (every Play purchase names its base plan) and refused on an App Store one. Mapping a product
        again replaces its plan price. A notification for an unmapped product is dead-lettered; map it, then
        replay the dead letter.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        switch arguments.positional() {
        case "map"?:
            guard let connection = try arguments.option("--connection") else { throw UsageError("--connection is required") }
            guard let product = try arguments.option("--product") else { throw UsageError("--product is required") }
            let basePlan = try arguments.option("--base-plan")
            guard let planPrice = try arguments.option("--plan-price") else { throw UsageError("--plan-price is required") }
            try arguments.finish()
            let connectionID = try Parse.id(connection, "--connection")
            let productID = try Parse.text(product, "--product", maxBytes: 255)
            let basePlanID = try basePlan.map { try Parse.text($0, "--base-plan", maxBytes: 255) }
            let planPriceID = try Parse.id(planPrice, "--plan-price")
            try await environment.withPool { pool in
                try await pool.transaction { db in
                    guard let found = try StoreConnections.get(id: connectionID, on: db) else {
                        throw SetupError(.notFound, "no connection \(connectionID)")
                    }
                    // Matching is exact on the base plan: Apple has none, and every Google Play purchase names one,
                    // so a mapping that differs would never match a purchase.
                    if basePlanID != nil, found.store == .apple {
                        throw SetupError(.mismatch, "--base-plan is for Google Play; connection \(connectionID) is an App Store connection")
                    }
                    if basePlanID == nil, found.store == .google {
                        throw SetupError(.mismatch, "--base-plan is required: connection \(connectionID) is a Google Play connection, "
                                         + "and every Play purchase names its base plan")
                    }
                    try Catalog.mapProduct(connectionID: connectionID, productID: productID, basePlanID: basePlanID,
                                           planPriceID: planPriceID, on: db)
                }
            }
            let base = basePlanID.map { " base plan \($0)" } ?? ""
            Output.print(json ? Output.Value.object([
                ("connection_id", .int(Int(connectionID))), ("product", .string(productID)),
                ("base_plan", basePlanID.map { .string($0) } ?? .null), ("plan_price_id", .int(Int(planPriceID))),
            ]).text : "product \(productID)\(base) on connection \(connectionID) maps to plan price \(planPriceID)")
            return 0
        case "list"?:
            guard let connection = try arguments.option("--connection") else { throw UsageError("--connection is required") }
            try arguments.finish()
            let connectionID = try Parse.id(connection, "--connection")
            let mappings = try await environment.withPool { pool in
                try await pool.withConnection { db in try await Catalog.mappings(connectionID: connectionID, on: db) }
            }
            guard let mappings else { throw SetupError(.notFound, "no connection \(connectionID)") }
            if json {
                Output.print(Output.Value.array(mappings.map { mapping in
                    Output.Value.object([("product", .string(mapping.product)),
                             ("base_plan", mapping.basePlan.isEmpty ? .null : .string(mapping.basePlan)),
                             ("plan_price_id", .int(Int(mapping.planPriceID))), ("plan", .string(mapping.plan)),
                             ("price", .string(mapping.price)), ("amount_minor", .int(Int(mapping.amount.minorUnits))),
                             ("currency", .string(mapping.amount.currency)), ("period", .string(mapping.period))])
                }).text)
            } else {
                Output.print(mappings.isEmpty ? "no products mapped on connection \(connectionID)" : Output.table(
                    ["PRODUCT", "BASE PLAN", "PLAN PRICE", "PLAN", "PRICE", "AMOUNT", "PERIOD"],
                    mappings.map { [$0.product, $0.basePlan.isEmpty ? "-" : $0.basePlan, String($0.planPriceID), $0.plan,
                                    $0.price, $0.amount.description, $0.period] }))
            }
            return 0
        case let other?:
            throw UsageError("unknown action \(Parse.quoted(other)); say map or list")
        case nil:
            throw UsageError("say map or list")
        }
    }
}
