import Accounts
import Foundation
import Logging
import Mirror

/// `GET /mobile-stores/customers/{customer}/entitlements`: what the customer holds now, across web, App
/// Store and Google Play, by the one `EntitlementRules` every reader uses. The budget's charge, the customer
/// check and the read go in one round trip: this is the endpoint backends poll.
enum EntitlementEndpoints {
    static func read(_ call: APICall) async throws -> APIAnswer {
        let customer = UUID(uuidString: call.parameters["customer", default: ""])?.uuidString.lowercased()
        guard let customer else {
            try await call.charge()
            throw APIError.customerNotFound
        }
        let (exists, entitlements) = try await call.charged(Customers.exists(customer, accountID: call.principal.accountID),
                                                            Entitlement.holding(customer))
        guard exists else { throw APIError.customerNotFound }
        return APIAnswer(status: 200, body: body(customerID: customer, entitlements: entitlements))
    }

    static func body(customerID: String, entitlements: [Entitlement]) -> JSONValue {
        .object([("customer_id", .string(customerID)), ("entitlements", .array(entitlements.map(\.json)))])
    }
}
