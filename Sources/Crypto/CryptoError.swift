import COpenSSL

/// A cryptographic operation failed. `reason` says which check or which input; OpenSSL's own error
/// queue, drained on the thread that failed, is appended to it.
public struct CryptoError: Error, CustomStringConvertible, Sendable, Equatable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Bytes or text that are not what they claim to be (base64, PEM, DER, JSON).
        public static let invalidEncoding = Code("invalid encoding")
        /// A key that cannot be used, or is of the wrong type or size.
        public static let invalidKey = Code("invalid key")
        /// A certificate that does not parse or lacks what it must have.
        public static let invalidCertificate = Code("invalid certificate")
        /// A certificate chain that does not validate against the trusted roots.
        public static let untrustedChain = Code("untrusted chain")
        /// A JWS header asks for handling StoreSync does not implement (`crit`, an unencoded payload).
        public static let unsupportedHeader = Code("unsupported header")
        /// The signature does not match the data and key.
        public static let badSignature = Code("bad signature")
        /// OpenSSL failed for a reason unrelated to the input (memory, provider).
        public static let internalError = Code("internal error")

        public var description: String { name }
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Equal when the codes are: tests assert on what failed, not on OpenSSL's wording.
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code): \(reason)" }

    /// An error for a failed OpenSSL call, carrying (and clearing) this thread's OpenSSL error queue.
    package static func openSSL(_ code: Code, _ reason: String) -> CryptoError {
        let details = drainErrorQueue()
        return CryptoError(code, details.isEmpty ? reason : "\(reason) (\(details.joined(separator: "; ")))")
    }
}

/// Empties OpenSSL's per-thread error queue, returning its entries as text. Must run on the thread that
/// made the failing call, before any suspension point.
func drainErrorQueue() -> [String] {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        if messages.count < 4 { messages.append(String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)) }
    }
    return messages
}
