/// Why a signed App Store payload was rejected. The codes mirror Apple's own libraries'
/// `VerificationError` so on-call can map a dead letter to Apple's documentation; `reason` names the
/// exact check that failed.
public struct AppStoreVerificationError: Error, CustomStringConvertible, Sendable, Equatable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Not a compact JWS, wrong `alg`, not 3 certificates in `x5c`, or a payload that is not the expected JSON.
        public static let invalidFormat = Code("INVALID_JWT_FORMAT")
        /// A certificate in `x5c` does not parse.
        public static let invalidCertificate = Code("INVALID_CERTIFICATE")
        /// The chain does not lead to a trusted root, lacks Apple's marker extensions, or the signature is wrong.
        public static let verificationFailure = Code("VERIFICATION_FAILURE")
        /// Verification could not be completed for a transient reason; try again later.
        public static let retryableFailure = Code("RETRYABLE_VERIFICATION_FAILURE")
        /// `bundleId` (or, in production, `appAppleId`) differs from the store connection's.
        public static let invalidAppIdentifier = Code("INVALID_APP_IDENTIFIER")
        /// `environment` differs from the store connection's.
        public static let invalidEnvironment = Code("INVALID_ENVIRONMENT")

        public var description: String { name }
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Whether retrying later can succeed; everything else is permanent for this payload.
    public var isRetryable: Bool { code == .retryableFailure }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code): \(reason)" }
}
