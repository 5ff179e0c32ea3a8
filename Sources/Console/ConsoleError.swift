/// Why the console cannot start or do what it was asked, in words for the operator who started it.
public struct ConsoleError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The credentials file cannot be read or holds a malformed line.
        public static let invalidCredentials = Code("invalid credentials")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
