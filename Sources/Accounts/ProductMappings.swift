import Postgres
import StoreModel

/// A store product (and Google base plan) of a connection, with the plan price it bills as.
public struct ProductMapping: Sendable, Equatable {
    public let product: String
    /// Empty for a product without base plans (Apple).
    public let basePlan: String
    public let planPriceID: Int64
    public let plan: String
    public let price: String
    public let amount: Money
    public let period: String
}

extension Catalog {
    /// The connection's mappings with what they map to; `nil` when there is no such connection.
    public static func mappings(connectionID: Int64, on db: isolated PostgresConnection) throws -> [ProductMapping]? {
        guard try !db.query("SELECT 1 FROM store_connections WHERE id = $1", [connectionID]).isEmpty else { return nil }
        return try db.query("""
            SELECT m.store_product_id, m.base_plan_id, pp.id, p.code, pp.code, pp.amount_minor, pp.currency, pp.period
            FROM product_mappings m JOIN plan_prices pp ON pp.id = m.plan_price_id JOIN plans p ON p.id = pp.plan_id
            WHERE m.connection_id = $1 ORDER BY m.store_product_id, m.base_plan_id
            """, [connectionID]).map { row in
            ProductMapping(product: try row.decode(0), basePlan: try row.decode(1), planPriceID: try row.decode(2),
                           plan: try row.decode(3), price: try row.decode(4),
                           amount: Money(minorUnits: try row.decode(5), currency: try row.decode(6)), period: try row.decode(7))
        }
    }
}
