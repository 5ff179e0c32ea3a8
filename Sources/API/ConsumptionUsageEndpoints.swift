import Accounts
import Foundation
import Logging
import Mirror
import Postgres

/// `PUT` and `GET /mobile-stores/customers/{customer}/consumption-usage/{transactionId}`: the values Apple's
/// consumption request asks about one of the customer's App Store transactions, which the worker sends when
/// the connection answers consumption requests. Reports are upserts; values are checked against Apple's.
enum ConsumptionUsageEndpoints {
    static func record(_ call: APICall, pool: PostgresPool) async throws -> APIAnswer {
        let (customerID, transactionID) = try await owned(call)
        var validation = Validation(try RequestBody(call.request))
        let consented = validation.bool("customer_consented", required: true)
        let delivery = validation.choice("delivery_status", required: true, among: ConsumptionUsage.deliveryStatuses)
        let sample = validation.bool("sample_content_provided", required: true)
        let percentage = validation.integer("consumption_percentage", required: false, range: ConsumptionUsage.percentageRange)
        let preference = validation.choice("refund_preference", required: false, among: ConsumptionUsage.refundPreferences)
        try validation.check()
        guard let consented, let delivery, let sample else { throw APIError(422, "The given data was invalid.") }
        let usage = ConsumptionUsage(customerConsented: consented, deliveryStatus: delivery, sampleContentProvided: sample,
                                     consumptionPercentage: percentage.map { Int($0) }, refundPreference: preference)
        try await pool.transaction { db in try usage.record(for: transactionID, on: db) }
        return APIAnswer(status: 200, body: body(usage, customerID: customerID, transactionID: transactionID))
    }

    static func read(_ call: APICall, pool: PostgresPool) async throws -> APIAnswer {
        let (customerID, transactionID) = try await owned(call)
        guard let usage = try await pool.query(ConsumptionUsage.finding(transactionID)) else {
            throw APIError(404, "No consumption usage recorded for this transaction")
        }
        return APIAnswer(status: 200, body: body(usage, customerID: customerID, transactionID: transactionID))
    }

    /// The path's customer and transaction, once the budget is charged and the transaction is known to be an App
    /// Store charge of this account's customer (404 otherwise, whichever part is wrong).
    private static func owned(_ call: APICall) async throws -> (String, String) {
        let customer = UUID(uuidString: call.parameters["customer", default: ""])?.uuidString.lowercased()
        let transactionID = call.parameters["transactionId", default: ""]
        guard let customer, (1...255).contains(transactionID.utf8.count) else {
            try await call.charge()
            throw APIError.customerNotFound
        }
        let (exists, owned) = try await call.charged(Customers.exists(customer, accountID: call.principal.accountID),
                                                     ConsumptionUsage.isCustomersTransaction(transactionID, customerID: customer))
        guard exists else { throw APIError.customerNotFound }
        guard owned else { throw APIError(404, "Transaction not found for this customer") }
        return (customer, transactionID)
    }

    private static func body(_ usage: ConsumptionUsage, customerID: String, transactionID: String) -> JSONValue {
        .object([
            ("customer_id", .string(customerID)), ("transaction_id", .string(transactionID)),
            ("customer_consented", .bool(usage.customerConsented)), ("delivery_status", .string(usage.deliveryStatus)),
            ("sample_content_provided", .bool(usage.sampleContentProvided)),
            ("consumption_percentage", usage.consumptionPercentage.map { .int($0) } ?? .null),
            ("refund_preference", usage.refundPreference.map(JSONValue.string) ?? .null),
        ])
    }
}
