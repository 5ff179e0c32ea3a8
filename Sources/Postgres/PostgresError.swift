/// A database failure, classified so callers can decide between retrying the transaction,
/// reconnecting, or giving up — without parsing messages.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is. A struct rather than an enum so codes can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// SQLSTATE 23505: an insert or update hit a unique constraint.
        public static let uniqueViolation = Code("unique violation")
        /// SQLSTATE 40001 / 40P01: the transaction lost a race and should be run again from the start.
        public static let serializationFailure = Code("serialization failure")
        /// The server went away or could not be reached; reconnect with backoff.
        public static let connectionLost = Code("connection lost")
        /// The server answered but refused this login — wrong password, unknown role or database, no
        /// `pg_hba.conf` entry: a configuration error that connecting again cannot fix.
        public static let loginRefused = Code("login refused")
        /// The connection string is not one libpq can parse: a configuration error that connecting again
        /// cannot fix.
        public static let invalidConnectionString = Code("invalid connection string")
        /// No connection became free within the pool's acquire timeout.
        public static let poolTimeout = Code("pool timeout")
        /// A statement prepared on this connection no longer fits the schema — a migration changed a table
        /// under it — and has been forgotten: running the work again prepares it afresh.
        public static let staleStatement = Code("stale prepared statement")
        /// A row could not be decoded into the requested Swift type.
        public static let decoding = Code("decoding")
        /// Any other server error; see `sqlState`.
        public static let other = Code("other")

        public var description: String { name }
    }

    public let code: Code
    /// The five-character SQLSTATE reported by the server, when there was one.
    public let sqlState: String?
    /// The server's primary message, or the client-side reason.
    public let message: String
    /// The name of the violated constraint, when the server reported one.
    public let constraint: String?

    public init(_ code: Code, sqlState: String? = nil, message: String, constraint: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.constraint = constraint
    }

    /// Maps a SQLSTATE to a code: class 08 and the admin-shutdown states mean the connection is gone.
    public static func classify(sqlState: String) -> Code {
        switch sqlState {
        case "23505": .uniqueViolation
        case "40001", "40P01": .serializationFailure
        case "57P01", "57P02", "57P03": .connectionLost
        case _ where sqlState.hasPrefix("08"): .connectionLost
        default: .other
        }
    }

    /// Whether a failed connection attempt's libpq message is the server refusing the login itself (as
    /// opposed to being unreachable, starting up, shutting down or full). libpq reports no SQLSTATE for a
    /// failed connection, so its wording is all there is to go on; anything unrecognised stays transient.
    static func isLoginRefusal(_ message: String) -> Bool {
        let refusals = ["authentication failed", "no pg_hba.conf entry", "no password supplied", "password is required",
                        "does not exist", "permission denied for database", "not permitted to log in"]
        return refusals.contains { message.contains($0) }
    }

    /// Whether running the same work again (on a fresh transaction or connection) may succeed.
    public var isTransient: Bool {
        code == .serializationFailure || code == .connectionLost || code == .poolTimeout || code == .staleStatement
    }

    public var description: String {
        var text = "database error (\(code)"
        if let sqlState { text += ", SQLSTATE \(sqlState)" }
        text += "): \(message)"
        if let constraint { text += " [constraint \(constraint)]" }
        return text
    }
}
