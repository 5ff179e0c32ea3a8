/// Why Google's answers about one purchase could not be turned into a `StoreSnapshot`. All are permanent for that
/// answer: the same answer fails the same way, so the job should dead-letter with this message for on-call.
public struct GoogleSnapshotError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A `subscriptionState` this version does not know (or `SUBSCRIPTION_STATE_UNSPECIFIED`): entitlement hangs
        /// on it, so it is never guessed.
        public static let unknownState = Code("unknown state")
        /// A field the snapshot needs is absent (`lineItems`, `productId`, an order's `createTime` or `total`…).
        public static let missingField = Code("missing field")
        /// A value the mirror cannot interpret safely (an unknown order state, a partial refund of unknown amount).
        public static let unsupportedValue = Code("unsupported value")
        /// An amount that is not exact money (no or bad currency, units and nanos of different signs, a refund
        /// larger than its charge or in another currency).
        public static let invalidMoney = Code("invalid money")
        /// An order that belongs to another purchase than the one being translated.
        public static let orderMismatch = Code("order mismatch")

        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "Google Play snapshot \(code): \(message)" }
}
