import Accounts
import Crypto
import Foundation
import Logging
import Postgres

/// `POST /mobile-stores/account-tokens` and `DELETE /mobile-stores/account-tokens/{accountToken}`: the
/// reference's issue, reuse, rotate and revoke, through the same `AccountTokens` as `storesync tokens`.
enum AccountTokenEndpoints {
    static func issue(_ call: APICall, pool: PostgresPool) async throws -> APIAnswer {
        try await call.charge()
        var validation = Validation(try RequestBody(call.request))
        let customerID = validation.customerID()
        let rotate = validation.bool("rotate", required: false) ?? false
        try validation.check()
        guard let customerID else { throw APIError.customerNotFoundField }
        let accountID = call.principal.accountID
        let issued: AccountTokens.Issued
        do {
            issued = try await pool.transaction { db in
                try AccountTokens.issue(customerID: customerID, accountID: accountID, rotate: rotate,
                                        sha256: { Digest.sha256($0) }, on: db)
            }
        } catch let error as AccountsError where error.code == .unknownCustomer {
            throw APIError.customerNotFoundField
        }
        return APIAnswer(status: issued.reused ? 200 : 201, body: .object([
            ("account_token", .string(issued.token)), ("client_secret", issued.secret.map(JSONValue.string) ?? .null),
            ("reused", .bool(issued.reused)),
        ]))
    }

    static func revoke(_ call: APICall, pool: PostgresPool) async throws -> APIAnswer {
        let token = call.parameters["accountToken", default: ""]
        try await call.charge()
        let accountID = call.principal.accountID
        let revoked = try await pool.transaction { db in
            try AccountTokens.revoke(token: token, accountID: accountID, on: db)
        }
        guard revoked else { throw APIError(404, "Account token not found") }
        return APIAnswer(status: 200, body: .object([("account_token", .string(token.lowercased())), ("revoked", .bool(true))]))
    }
}

extension Validation {
    /// `customer_id`: required, and a UUID (anything else names no customer, so it is "not found").
    mutating func customerID() -> String? {
        guard let text = string("customer_id", required: true, maxLength: 64) else { return nil }
        guard let uuid = UUID(uuidString: text) else {
            fail("customer_id", "Customer not found")
            return nil
        }
        return uuid.uuidString.lowercased()
    }
}

extension APIError {
    /// "Customer not found" on `customer_id`, which the reference words as a field's failure.
    static let customerNotFoundField = APIError.field("customer_id", "Customer not found")
}
