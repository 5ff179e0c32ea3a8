/// Why a tenancy record could not be read or written: the account's configuration, not a store's answer, is
/// at fault, so retrying cannot help until someone changes that configuration.
public struct AccountsError: Error, CustomStringConvertible, Sendable, Equatable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// No such customer in the account.
        public static let unknownCustomer = Code("unknown customer")
        /// The store connection does not exist (deleted while its jobs were queued), or a row names a store or
        /// environment this build does not know.
        public static let unknownConnection = Code("unknown connection")
        /// An API client's name or scopes break the rules for them.
        public static let invalidClient = Code("invalid client")
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
