/// Why a scenario command, a configuration or a control request was refused. Commands check that the change
/// is one the App Store could make in the subscription's current state, so a test cannot build a history
/// Apple would never produce.
public struct SimulatorError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The simulator's configuration is unusable (no app, duplicate bundle id, a Production app without
        /// an App Apple ID, a period under 1 ms or over 100 years).
        public static let invalidConfiguration = Code("invalid configuration")
        /// An argument is out of range or malformed (empty product id, negative price, bad currency).
        public static let invalidArgument = Code("invalid argument")
        /// No app with this bundle id, or no bundle id given while several apps are configured.
        public static let unknownApp = Code("unknown app")
        /// No subscription or transaction with this id.
        public static let notFound = Code("not found")
        /// The command does not apply to the subscription as it stands (renewing an expired one, refunding
        /// a refunded transaction, …).
        public static let invalidState = Code("invalid state")
        /// There is no notification to send again.
        public static let nothingToResend = Code("nothing to resend")

        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
