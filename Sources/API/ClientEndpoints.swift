import Accounts
import Foundation
import Logging
import Mirror
import Postgres
import Sync

/// The app endpoints: what an app (or the `subscriptionflow_iap` SDK) calls from the device with its account
/// token pair, always for the token's customer. They face anyone holding a phone, so they answer nothing that
/// tells whether a purchase exists or whose it is, and never the customer's id, which the token stands in for.
enum ClientEndpoints {
    /// Every refusal that would tell about a purchase answers this, byte for byte.
    static let cannotLink = APIError(409, "This purchase cannot be linked to this account.")

    /// `POST /mobile-stores/client/purchases`, sent right after the store completes a purchase; the SDK
    /// finishes the store transaction only on a 200, so a 200 means the mirror has committed (or, for a sandbox
    /// purchase on a Production connection, that it is good for this session).
    static func report(_ call: APICall, pool: PostgresPool, registrar: PurchaseRegistrar) async throws -> APIAnswer {
        let reported = try ClientPurchaseRequest(call.request)
        let app = call.app
        let report: PurchaseReport
        do {
            report = try await registrar.report(reported.purchase, customerID: app.customerID, accountID: app.accountID,
                                                connectionID: reported.connectionID, pool: pool)
        } catch let error as RegistrationError {
            switch error.code {
            case .ownershipConflict, .unknownPurchase, .environmentMismatch: throw cannotLink
            default: throw PurchaseEndpoints.refusal(error, connectionGiven: reported.connectionID != nil)
            }
        }
        switch report {
        case .inSession(_, let entitlements):
            return answer(store: reported.store, sandbox: true, subscriptionID: nil, entitlements: entitlements.map(\.json))
        case .mirrored(let registration):
            let (subscription, entitlements) = try await PurchaseEndpoints.mirrored(registration, customerID: app.customerID,
                                                                                   pool: pool)
            return answer(store: reported.store, sandbox: false, subscriptionID: subscription?.id,
                          entitlements: entitlements.map(\.json))
        }
    }

    private static func answer(store: String, sandbox: Bool, subscriptionID: Int64?, entitlements: [JSONValue]) -> APIAnswer {
        APIAnswer(status: 200, body: .object([
            ("store", .string(store)), ("sandbox", .bool(sandbox)), ("linked", .bool(!sandbox)),
            ("subscription_id", subscriptionID.map { .int(Int($0)) } ?? .null), ("entitlements", .array(entitlements)),
        ]))
    }

    /// `GET /mobile-stores/client/entitlements`: the backend read's entitlements for the token's customer, read in
    /// the round trip that authenticates the pair. Never the session's sandbox ones: those were never stored.
    static func entitlements(_ call: APICall) -> APIAnswer {
        guard let entitlements = call.prefetched else { preconditionFailure("the route's read was not sent") }
        return APIAnswer(status: 200, body: .object([("entitlements", entitlements)]))
    }

    /// What the entitlements endpoint reads with the authentication.
    static let entitlementsRead: Access.AppRead = { token, host in
        Entitlement.holding(customerOfAccountToken: token, host: host).map { .array($0.map(\.json)) }
    }
}
