import Postgres

/// What the backend recorded about a transaction's consumption (`consumption_usage`): the facts an answer to
/// Apple's consumption request is made of.
public struct ConsumptionUsage: Sendable, Equatable {
    public let customerConsented: Bool
    public let deliveryStatus: String
    public let sampleContentProvided: Bool
    public let consumptionPercentage: Int?
    public let refundPreference: String?

    /// What was recorded for the transaction, nil when the backend recorded nothing (Apple then gets no answer).
    public static func find(_ transactionID: String, on db: isolated PostgresConnection) throws -> ConsumptionUsage? {
        try db.query("""
            SELECT customer_consented, delivery_status, sample_content_provided, consumption_percentage, refund_preference
            FROM consumption_usage WHERE store_transaction_id = $1
            """, [transactionID]).first.map {
            ConsumptionUsage(customerConsented: try $0.decode(0), deliveryStatus: try $0.decode(1),
                             sampleContentProvided: try $0.decode(2), consumptionPercentage: try $0.decodeOptional(3),
                             refundPreference: try $0.decodeOptional(4))
        }
    }
}
