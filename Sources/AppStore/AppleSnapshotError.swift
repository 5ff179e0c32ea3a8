/// Why a verified App Store answer could not be turned into a `StoreSnapshot`. All are permanent for that
/// answer: the same answer fails the same way, so the job should dead-letter with this message for on-call.
public struct AppleSnapshotError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The statuses answer has no `lastTransactions` entry for the lineage asked about.
        public static let lineageNotFound = Code("lineage not found")
        /// A `status` outside Apple's documented 1…5.
        public static let unknownStatus = Code("unknown status")
        /// A field the snapshot needs is absent (`productId`, `purchaseDate`, `revocationPercentage`…).
        public static let missingField = Code("missing field")
        /// A value the mirror cannot interpret safely (an unknown ownership or revocation type, an environment
        /// that is neither Production nor Sandbox).
        public static let unsupportedValue = Code("unsupported value")
        /// A price or refund share that is not exact money (no or bad currency, negative, overflowing).
        public static let invalidMoney = Code("invalid money")

        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "App Store snapshot \(code): \(message)" }
}
