import Foundation
import HTTP
import Sync

/// An app's `POST /mobile-stores/client/purchases`, read and validated from the request alone: the store and the
/// purchase it names, and the connection when the account has several apps on the store. Public so the fuzz run
/// drives exactly what the endpoint parses.
public struct ClientPurchaseRequest: Sendable, Equatable {
    public let store: String
    public let purchase: PurchaseIdentifier
    public let connectionID: Int64?

    /// Throws the 415/400 of a body that is not a JSON object, and the 422 listing every failed field; the
    /// customer is the account token's, so a body naming one is refused.
    public init(_ request: HTTPRequest) throws(APIError) {
        var validation = Validation(try RequestBody(request))
        if validation.body.values["customer_id"] != nil {
            validation.fail("customer_id", "customer_id is not accepted: the purchase is for the account token's customer")
        }
        let (store, purchase) = PurchaseEndpoints.purchase(&validation)
        let connectionID = validation.integer("connection_id", required: false, range: 1...Int64.max)
        try validation.check()
        guard let store, let purchase else { throw APIError.field("store", "store is required") }
        self.store = store
        self.purchase = purchase
        self.connectionID = connectionID
    }
}

/// The app's account token pair as its headers carry it. A token is kept only when it is a UUID and a secret only
/// when it is printable ASCII of sensible length: anything else cannot match (the secret itself never leaves the
/// process; only its SHA-256 is compared).
public struct AppCredentialHeaders: Sendable, Equatable {
    static let tokenHeader = "x-sf-account-token"
    static let secretHeader = "x-sf-client-secret"
    /// Secrets StoreSync issues are 48 characters; anything far longer is not one.
    static let maxSecretLength = 256

    /// Lowercased, as stored.
    public let token: String?
    public let secret: String?

    public init(_ request: HTTPRequest) {
        token = request.header(Self.tokenHeader).flatMap { header in
            let value = header.trimmingHTTPWhitespace
            return value.utf8.count == 36 ? UUID(uuidString: value)?.uuidString.lowercased() : nil
        }
        secret = request.header(Self.secretHeader).flatMap { VisibleASCII.bounded($0, maxLength: Self.maxSecretLength) }
    }
}
