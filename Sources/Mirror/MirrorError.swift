/// Why a snapshot could not be applied. Every code but `lineageBusy` is permanent for the job at hand:
/// retrying the same answer cannot help until on-call changes the configuration (and replays the dead letter).
public struct MirrorError: Error, CustomStringConvertible, Sendable, Equatable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// No product mapping for the store product (and base plan) on this connection.
        public static let productNotMapped = Code("product not mapped")
        /// The snapshot belongs to a different store than the connection.
        public static let storeMismatch = Code("store mismatch")
        /// The purchase's environment is not the connection's: mirroring it would mix test and real revenue.
        public static let environmentMismatch = Code("environment mismatch")
        /// Another transaction is applying the same lineage right now; try again in a moment.
        public static let lineageBusy = Code("lineage busy")
        /// A refund-only update names a lineage the connection does not mirror.
        public static let unknownPurchase = Code("unknown purchase")
        /// A refund-only update refunds a charge the lineage has no invoice for: without the store's answer about
        /// the purchase there is nothing to book the charge from, so its refund cannot be linked.
        public static let chargeNotBooked = Code("charge not booked")
        /// A backend registered, for one customer, a purchase that belongs to another (see `Linking`).
        public static let ownershipConflict = Code("ownership conflict")
        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
