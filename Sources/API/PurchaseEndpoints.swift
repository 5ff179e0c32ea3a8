import Accounts
import Foundation
import HTTP
import Logging
import Mirror
import Postgres
import Sync

/// `POST /mobile-stores/purchases`: a backend registers or restores a purchase for a customer. The request
/// names the purchase and the customer, nothing else is believed: `PurchaseRegistrar` asks the store now
/// and mirrors its answer as a notification's would be, with the customer as claimant.
enum PurchaseEndpoints {
    static func register(_ call: APICall, pool: PostgresPool, registrar: PurchaseRegistrar) async throws -> APIAnswer {
        try await call.charge()
        var validation = Validation(try RequestBody(call.request))
        let customerID = validation.customerID()
        let (store, purchase) = Self.purchase(&validation)
        let connectionID = validation.integer("connection_id", required: false, range: 1...Int64.max)
        try validation.check()
        guard let customerID, let purchase else { throw APIError.customerNotFoundField }
        let accountID = call.principal.accountID
        guard try await pool.query(Customers.exists(customerID, accountID: accountID)) else {
            throw APIError.customerNotFoundField
        }
        let registration: Registration
        do {
            registration = try await registrar.register(purchase, customerID: customerID, accountID: accountID,
                                                        connectionID: connectionID, pool: pool)
        } catch let error as RegistrationError {
            throw refusal(error, connectionGiven: connectionID != nil)
        }
        let (subscription, entitlements) = try await mirrored(registration, customerID: customerID, pool: pool)
        return APIAnswer(status: 200, body: .object([
            ("customer_id", .string(customerID)), ("store", .string(store ?? "")),
            ("connection_id", .int(Int(registration.connection.id))), ("sandbox", .bool(false)), ("linked", .bool(true)),
            ("linked_now", .bool(registration.outcome.linkedNow)),
            ("subscription_id", subscription.map { .int(Int($0.id)) } ?? .null),
            ("subscription", subscription?.json ?? .null),
            ("entitlements", .array(entitlements.map(\.json))),
        ]))
    }

    /// What a registration left the customer with, read in one round trip: the purchase's customer subscription
    /// and every entitlement the customer now holds.
    static func mirrored(_ registration: Registration, customerID: String,
                         pool: PostgresPool) async throws -> (CustomerSummary.Subscription?, [Entitlement]) {
        let (subscriptions, entitlements) = try await pool.run { db in
            try db.query(CustomerSummary.subscriptions(of: customerID, purchaseID: registration.outcome.purchaseID),
                         Entitlement.holding(customerID))
        }
        return (subscriptions.first, entitlements)
    }

    /// The body's `store` and the purchase it names by that store's identifier, each failure noted.
    static func purchase(_ validation: inout Validation) -> (store: String?, purchase: PurchaseIdentifier?) {
        let store = validation.choice("store", required: true, among: ["apple", "google_play"])
        switch store {
        case "apple"?:
            if validation.body.values["transaction_id"] == nil {
                validation.fail("transaction_id", "transaction_id is required for the App Store")
            } else if let id = validation.string("transaction_id", required: true, maxLength: 64,
                                                 allowed: Self.isIdentifierByte, describe: "letters, digits, '.', '-' or '_'") {
                return (store, .appleTransaction(id))
            }
        case "google_play"?:
            if validation.body.values["purchase_token"] == nil {
                validation.fail("purchase_token", "purchase_token is required for Google Play")
            } else if let token = validation.string("purchase_token", required: true, maxLength: 2048,
                                                    allowed: VisibleASCII.contains, describe: "printable ASCII") {
                return (store, .googlePurchaseToken(token))
            }
        default: break
        }
        return (store, nil)
    }

    /// Apple transaction ids are digits; simulators' and tests' are letters too. Nothing that could break a URL.
    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        PercentEncoding.alphanumerics.utf8.contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }

    static func refusal(_ error: RegistrationError, connectionGiven: Bool) -> APIError {
        switch error.code {
        case .noConnection, .ambiguousConnection:
            return .field(connectionGiven || error.code == .ambiguousConnection ? "connection_id" : "store", error.message)
        case .ownershipConflict:
            return APIError(409, "This purchase cannot be linked to this customer: it belongs to another one.")
        case .unavailable:
            let seconds = max(1, Int((error.retryAfter ?? .seconds(5)).components.seconds))
            return APIError(503, error.message, headers: [("retry-after", String(seconds))])
        case .storeRefused:
            return APIError(502, error.message)
        default:
            return APIError(422, error.message)
        }
    }
}
