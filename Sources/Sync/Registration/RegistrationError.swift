import Foundation

/// Why a backend's purchase registration was refused, in words its caller can act on. The API maps each code
/// to one status; `retryAfter` is set when trying again later can succeed.
public struct RegistrationError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The account has no connection for the store (or none with the id given).
        public static let noConnection = Code("no connection")
        /// The account has several apps on the store and the request did not say which.
        public static let ambiguousConnection = Code("ambiguous connection")
        /// The store knows no such purchase (for this app).
        public static let unknownPurchase = Code("unknown purchase")
        /// The purchase's environment is not its connection's (a sandbox purchase on Production, or the reverse).
        public static let environmentMismatch = Code("environment mismatch")
        /// The store product maps to no plan price on the connection.
        public static let productNotMapped = Code("product not mapped")
        /// A Google purchase still waiting for payment: nothing to mirror yet.
        public static let pending = Code("pending")
        /// The purchase is linked, or tagged, to another customer.
        public static let ownershipConflict = Code("ownership conflict")
        /// The store is down, slow or rate-limiting us, or the purchase is being mirrored right now.
        public static let unavailable = Code("unavailable")
        /// The store refused the connection's credentials, or answered what cannot be mirrored: a configuration
        /// (or store) fault that retrying the request unchanged will not fix soon.
        public static let storeRefused = Code("store refused")
        public var description: String { name }
    }

    public let code: Code
    /// Safe to show the API's caller: names no credential and no other customer.
    public let message: String
    public let retryAfter: Duration?

    public init(_ code: Code, _ message: String, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code): \(message)" }
}
