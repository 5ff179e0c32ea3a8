/// Why a Pub/Sub push was not accepted as coming from Google, classified so the push endpoint can answer
/// 401 for a forged or misdirected push and 503 when only the key fetch failed (Pub/Sub then redelivers).
///
/// Reasons never contain the token: it is a bearer credential until it expires.
public struct PushTokenError: Error, CustomStringConvertible, Sendable {
    /// Which check failed. A struct rather than an enum so checks can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Not a `Bearer` credential, not a compact JWS, or claims that are not JSON of the expected shape.
        public static let malformed = Code("malformed")
        /// The header names an algorithm other than RS256; refused before any key is looked up.
        public static let unsupportedAlgorithm = Code("unsupported algorithm")
        /// The header carries `crit` or `"b64": false` (RFC 7515 §4.1.11, RFC 7797): a token StoreSync cannot
        /// read as its signer meant.
        public static let unsupportedHeader = Code("unsupported header")
        /// No `kid`, or one that is not among Google's keys even after the allowed refetch.
        public static let unknownKey = Code("unknown key")
        /// The signature does not match the key the `kid` names.
        public static let badSignature = Code("bad signature")
        /// `iss` is not Google's accounts issuer.
        public static let wrongIssuer = Code("wrong issuer")
        /// `aud` is not this endpoint's configured audience: a token minted for some other push endpoint.
        public static let wrongAudience = Code("wrong audience")
        /// `email` is not the service account this subscription pushes as.
        public static let wrongEmail = Code("wrong email")
        /// `email_verified` is not the JSON boolean `true`.
        public static let emailNotVerified = Code("email not verified")
        /// `exp` passed more than the allowed clock skew ago.
        public static let expired = Code("expired")
        /// `iat` lies further in the future than the allowed clock skew.
        public static let issuedInFuture = Code("issued in the future")
        /// Google's keys could not be fetched or parsed, or the token names a key missing from the set kept
        /// while they cannot; the push itself may be fine.
        public static let keysUnavailable = Code("keys unavailable")

        public var description: String { name }
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Whether the same push may verify later: only a key fetch failure is transient, every other rejection
    /// is about the token itself.
    public var isRetryable: Bool { code == .keysUnavailable }

    public var description: String { "push token rejected (\(code)): \(reason)" }
}
