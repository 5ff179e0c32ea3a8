import Foundation
import TestSupport
import Testing

/// `PUT` and `GET /api/v1/mobile-stores/customers/{customer}/consumption-usage/{transactionId}`: the values
/// Apple's consumption request asks about one App Store charge of the customer, checked against Apple's
/// values, kept as an upsert, and only for a transaction booked to that customer.
@Suite struct ConsumptionUsageEndpointTests {
    static func path(_ customer: String, _ transactionID: String) -> String {
        "/api/v1/mobile-stores/customers/\(customer)/consumption-usage/\(transactionID)"
    }

    static let report = """
        {"customer_consented":true,"delivery_status":"DELIVERED","sample_content_provided":false,\
        "consumption_percentage":25000,"refund_preference":"DECLINE"}
        """

    /// A new customer whose App Store purchase was registered through the API, so its transaction is booked as
    /// the customer's invoice.
    static func customerWithApplePurchase(_ api: APIHarness, bearer: String) async throws -> (customer: String, transactionID: String) {
        let customer = try await api.customerWithToken()
        let bought = try await api.buyOnAppStore(appAccountToken: customer.token)
        let registered = try await api.send("POST", "/api/v1/mobile-stores/purchases", json: """
            {"customer_id":"\(customer.id)","store":"apple","transaction_id":"\(bought.transactionId)"}
            """, bearer: bearer)
        try #require(registered.status == 200, "\(registered.text)")
        #expect(try await api.scalar("""
            SELECT count(*) FROM invoices WHERE store = 'apple' AND store_transaction_id = $1 AND customer_id = $2::uuid
            """, [bought.transactionId, customer.id], as: Int.self) == 1)
        return (customer.id, bought.transactionId)
    }

    @Test func aReportIsRecordedAndEchoed() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let (customer, transaction) = try await Self.customerWithApplePurchase(api, bearer: bearer)
            let answer = try await api.send("PUT", Self.path(customer, transaction), json: Self.report, bearer: bearer)
            #expect(answer.status == 200, "\(answer.text)")
            let json = try answer.json
            #expect(json["customer_id"] as? String == customer)
            #expect(json["transaction_id"] as? String == transaction)
            #expect(json["customer_consented"] as? Bool == true)
            #expect(json["delivery_status"] as? String == "DELIVERED")
            #expect(json["sample_content_provided"] as? Bool == false)
            #expect(json["consumption_percentage"] as? Int == 25_000)
            #expect(json["refund_preference"] as? String == "DECLINE")
            let row = try await api.database.pool.query("""
                SELECT customer_consented, delivery_status, sample_content_provided, consumption_percentage, refund_preference
                FROM consumption_usage WHERE store_transaction_id = $1
                """, [transaction])
            #expect(row.count == 1)
            #expect(try row[0].decode(0, as: Bool.self) == true)
            #expect(try row[0].decode(1, as: String.self) == "DELIVERED")
            #expect(try row[0].decode(2, as: Bool.self) == false)
            #expect(try row[0].decode(3, as: Int.self) == 25_000)
            #expect(try row[0].decode(4, as: String.self) == "DECLINE")
            #expect(answer.header("x-ratelimit-limit") == "500")
        }
    }

    /// Reports are upserts: a second report replaces the first (optional fields left out become null), and the
    /// read answers the latest.
    @Test func aSecondReportReplacesTheFirstAndIsWhatIsRead() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let (customer, transaction) = try await Self.customerWithApplePurchase(api, bearer: bearer)
            let path = Self.path(customer, transaction)
            #expect(try await api.send("PUT", path, json: Self.report, bearer: bearer).status == 200)
            let second = try await api.send("PUT", path, json: """
                {"customer_consented":false,"delivery_status":"UNDELIVERED_SERVER_OUTAGE","sample_content_provided":true}
                """, bearer: bearer)
            #expect(second.status == 200, "\(second.text)")
            #expect(try second.json["delivery_status"] as? String == "UNDELIVERED_SERVER_OUTAGE")
            #expect(try await api.scalar("SELECT count(*) FROM consumption_usage", as: Int.self) == 1)

            let read = try await api.send("GET", path, bearer: bearer)
            #expect(read.status == 200, "\(read.text)")
            let json = try read.json
            #expect(json["customer_id"] as? String == customer)
            #expect(json["transaction_id"] as? String == transaction)
            #expect(json["customer_consented"] as? Bool == false)
            #expect(json["delivery_status"] as? String == "UNDELIVERED_SERVER_OUTAGE")
            #expect(json["sample_content_provided"] as? Bool == true)
            #expect(json["consumption_percentage"] is NSNull, "\(read.text)")
            #expect(json["refund_preference"] is NSNull, "\(read.text)")
            #expect(read.header("x-ratelimit-remaining").flatMap(Int.init) != nil)
        }
    }

    @Test func readingBeforeAnyReportIsNotFound() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let (customer, transaction) = try await Self.customerWithApplePurchase(api, bearer: bearer)
            let answer = try await api.send("GET", Self.path(customer, transaction), bearer: bearer)
            #expect(answer.status == 404, "\(answer.text)")
            #expect(try answer.json["status"] as? Bool == false)
            #expect(try answer.json["message"] as? String == "No consumption usage recorded for this transaction")
        }
    }

    /// Apple's values only; every failing field is listed and the first failure is the message. Nothing is kept.
    @Test(arguments: [
        (#"{"delivery_status":"DELIVERED","sample_content_provided":false}"#, "customer_consented",
         "customer_consented is required"),
        (#"{"customer_consented":"yes","delivery_status":"DELIVERED","sample_content_provided":false}"#,
         "customer_consented", "customer_consented must be true or false"),
        (#"{"customer_consented":true,"delivery_status":"LOST","sample_content_provided":false}"#, "delivery_status",
         "delivery_status must be one of DELIVERED, UNDELIVERED_QUALITY_ISSUE, UNDELIVERED_WRONG_ITEM, UNDELIVERED_SERVER_OUTAGE, UNDELIVERED_OTHER"),
        (#"{"customer_consented":true,"delivery_status":"DELIVERED"}"#, "sample_content_provided",
         "sample_content_provided is required"),
        (#"{"customer_consented":true,"delivery_status":"DELIVERED","sample_content_provided":false,"consumption_percentage":100001}"#,
         "consumption_percentage", "consumption_percentage must be between 0 and 100000"),
        (#"{"customer_consented":true,"delivery_status":"DELIVERED","sample_content_provided":false,"consumption_percentage":-1}"#,
         "consumption_percentage", "consumption_percentage must be between 0 and 100000"),
        (#"{"customer_consented":true,"delivery_status":"DELIVERED","sample_content_provided":false,"consumption_percentage":"25"}"#,
         "consumption_percentage", "consumption_percentage must be an integer"),
        // A number that is not an integer is a field's failure, not malformed JSON.
        (#"{"customer_consented":true,"delivery_status":"DELIVERED","sample_content_provided":false,"consumption_percentage":2500.5}"#,
         "consumption_percentage", "consumption_percentage must be an integer"),
        (#"{"customer_consented":true,"delivery_status":"DELIVERED","sample_content_provided":false,"refund_preference":"MAYBE"}"#,
         "refund_preference", "refund_preference must be one of DECLINE, GRANT_FULL, GRANT_PRORATED"),
        (#"{"delivery_status":"LOST","sample_content_provided":false}"#, "customer_consented", "customer_consented is required"),
    ])
    func validatesEveryField(body: String, field: String, message: String) async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let (customer, transaction) = try await Self.customerWithApplePurchase(api, bearer: bearer)
            let answer = try await api.send("PUT", Self.path(customer, transaction), json: body, bearer: bearer)
            #expect(answer.status == 422, "\(answer.text)")
            let json = try answer.json
            #expect(json["status"] as? Bool == false)
            #expect(json["message"] as? String == message)
            #expect((json["errors"] as? [String: [String]])?[field]?.first == message, "\(answer.text)")
            #expect(try await api.scalar("SELECT count(*) FROM consumption_usage", as: Int.self) == 0)
        }
    }

    /// Only a transaction booked to the path's customer is the customer's to report or read: another
    /// customer's, an unknown one, and a customer the account does not have all answer 404, and nothing is kept.
    @Test func aTransactionNotBookedToTheCustomerIsNotFound() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let (owner, transaction) = try await Self.customerWithApplePurchase(api, bearer: bearer)
            let other = try await api.addCustomer()
            for (customer, id, message) in [(other, transaction, "Transaction not found for this customer"),
                                            (owner, "2000000999999", "Transaction not found for this customer"),
                                            (UUID().uuidString.lowercased(), transaction, "Customer not found"),
                                            ("not-a-uuid", transaction, "Customer not found")] {
                for method in ["PUT", "GET"] {
                    let answer = try await api.send(method, Self.path(customer, id), json: method == "PUT" ? Self.report : nil,
                                                    bearer: bearer)
                    #expect(answer.status == 404, "\(method) \(customer) \(id): \(answer.text)")
                    #expect(try answer.json["status"] as? Bool == false)
                    #expect(try answer.json["message"] as? String == message, "\(method) \(customer) \(id)")
                }
            }
            #expect(try await api.scalar("SELECT count(*) FROM consumption_usage", as: Int.self) == 0)
            #expect(try await api.send("PUT", Self.path(owner, transaction), json: Self.report, bearer: bearer).status == 200)
            let read = try await api.send("GET", Self.path(other, transaction), bearer: bearer)
            #expect(read.status == 404, "another customer cannot read the owner's report: \(read.text)")
        }
    }
}
