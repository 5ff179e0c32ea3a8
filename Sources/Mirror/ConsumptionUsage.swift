import Foundation
import Postgres

/// What the backend recorded about a transaction's consumption (`consumption_usage`): the facts an answer to
/// Apple's consumption request is made of.
public struct ConsumptionUsage: Sendable, Equatable {
    /// Apple's `deliveryStatus` values.
    public static let deliveryStatuses = ["DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM",
                                          "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]
    /// Apple's `refundPreference` values.
    public static let refundPreferences = ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]
    /// `consumptionPercentage` is in thousandths of a percent.
    public static let percentageRange: ClosedRange<Int64> = 0...100_000

    public let customerConsented: Bool
    public let deliveryStatus: String
    public let sampleContentProvided: Bool
    public let consumptionPercentage: Int?
    public let refundPreference: String?

    public init(customerConsented: Bool, deliveryStatus: String, sampleContentProvided: Bool,
                consumptionPercentage: Int?, refundPreference: String?) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }

    /// What was recorded for the transaction, nil when the backend recorded nothing (Apple then gets no answer).
    public static func find(_ transactionID: String, on db: isolated PostgresConnection) throws -> ConsumptionUsage? {
        try db.query(finding(transactionID))
    }

    /// `find` as a query, to send with others in one round trip.
    public static func finding(_ transactionID: String) -> PostgresQuery<ConsumptionUsage?> {
        PostgresQuery("""
            SELECT customer_consented, delivery_status, sample_content_provided, consumption_percentage, refund_preference
            FROM consumption_usage WHERE store_transaction_id = $1
            """, [transactionID]) { rows in
            try rows.first.map {
                ConsumptionUsage(customerConsented: try $0.decode(0), deliveryStatus: try $0.decode(1),
                                 sampleContentProvided: try $0.decode(2), consumptionPercentage: try $0.decodeOptional(3),
                                 refundPreference: try $0.decodeOptional(4))
            }
        }
    }

    /// Records the usage of an Apple transaction, replacing what was recorded before (reports are upserts).
    public func record(for transactionID: String, on db: isolated PostgresConnection) throws {
        _ = try db.query("""
            INSERT INTO consumption_usage (store_transaction_id, customer_consented, delivery_status,
                sample_content_provided, consumption_percentage, refund_preference)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (store_transaction_id) DO UPDATE SET customer_consented = EXCLUDED.customer_consented,
                delivery_status = EXCLUDED.delivery_status, sample_content_provided = EXCLUDED.sample_content_provided,
                consumption_percentage = EXCLUDED.consumption_percentage, refund_preference = EXCLUDED.refund_preference,
                updated_at = now()
            """, [transactionID, customerConsented, deliveryStatus, sampleContentProvided, consumptionPercentage,
                  refundPreference])
    }

    /// Whether `transactionID` is an App Store charge booked to `customerID`: only such a transaction's usage
    /// is the customer's to report.
    public static func isCustomersTransaction(_ transactionID: String, customerID: String) -> PostgresQuery<Bool> {
        PostgresQuery("""
            SELECT 1 FROM invoices WHERE store = 'apple' AND store_transaction_id = $1 AND customer_id = $2::uuid
            """, [transactionID, customerID]) { !$0.isEmpty }
    }
}
