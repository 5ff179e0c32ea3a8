/// Why the server could not start, classified so the daemon can tell a configuration mistake from a busy port.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    /// A struct rather than an enum so codes can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The daemon did not start: binding failed (port in use, address not local, no permission) or
        /// libmicrohttpd rejected the TLS certificate or key. `message` carries libmicrohttpd's reason.
        public static let cannotListen = Code("cannot listen")
        /// The host does not resolve to an address.
        public static let invalidAddress = Code("invalid address")
        /// TLS was configured but the installed libmicrohttpd was built without TLS support.
        public static let tls = Code("tls")
        /// A configuration value is out of range.
        public static let invalidConfiguration = Code("invalid configuration")

        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "HTTP server error (\(code)): \(message)" }
}
