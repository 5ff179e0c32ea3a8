import HTTP

/// Why an App Store Server API call failed, classified so the job layer can decide between retrying later
/// and dead-lettering without reading status codes or Apple's error numbers itself.
public struct AppStoreAPIError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// 429, or a wait the connection's own rate limit would impose beyond its bound: try again after
        /// `retryAfter` (or the backoff when Apple named no time).
        public static let rateLimited = Code("rate limited")
        /// Apple answered 5xx (`5000000` GeneralInternal, `5000001` GeneralInternalRetryable, or none).
        public static let serverError = Code("server error")
        /// 408: Apple (or a proxy in front of it) gave up waiting for the request; nothing was wrong with it.
        public static let requestTimeout = Code("request timeout")
        /// Apple's documented retryable answers outside 5xx: `4040002`, `4040004`, `4040006`.
        public static let retryableAppleError = Code("retryable Apple error")
        /// `4040010`: the id is unknown in this environment. Apple says not to unlock anything for it; a
        /// caller that does not know the purchase's environment may ask the other environment's connection.
        public static let transactionNotFound = Code("transaction not found")
        /// `4000005` InvalidRequestRevision: Apple does not accept the history revision sent (one stored from
        /// an earlier read that it no longer knows). Not retryable as it stands: the same revision fails every
        /// time, so the caller reads the history again from the start, without one.
        public static let invalidRevision = Code("invalid revision")
        /// 401: Apple refused the bearer token. Not retryable by itself, but the client drops the refused
        /// token, so a caller may try a bounded few times more: a fresh token succeeds where a cached one ran
        /// past its expiry by Apple's clock (a host clock behind by more than the renewal margin); a wrong key
        /// fails every time.
        public static let unauthorized = Code("unauthorized")
        /// Any other 4xx: the request is wrong as it stands (`appleErrorCode` and `appleErrorMessage` say why).
        public static let rejected = Code("rejected")
        /// No response arrived (`transport` says why); retryable unless the failure is about configuration.
        public static let transport = Code("transport")
        /// A response that is not what the endpoint documents (bad JSON, missing fields, unexpected status).
        public static let invalidResponse = Code("invalid response")
        /// A signed payload in the response failed verification; `verification` carries the verifier's code.
        public static let verificationFailed = Code("verification failed")
        /// The request was refused before sending (a malformed id, a consumption request Apple would reject).
        public static let invalidRequest = Code("invalid request")
        /// The bearer token could not be signed with the connection's key.
        public static let tokenSigning = Code("token signing")
        /// The connection's settings contradict each other or Apple's limits; raised when the client is made.
        public static let invalidConfiguration = Code("invalid configuration")

        public var description: String { name }
    }

    public let code: Code
    /// What failed, for logs and dead letters; never contains the bearer token.
    public let message: String
    public let httpStatus: Int?
    /// Apple's `errorCode` from the error body (e.g. `4000006`), when it sent one.
    public let appleErrorCode: Int64?
    public let appleErrorMessage: String?
    /// The wait Apple asked for with `Retry-After`, bounded to `AppStoreAPIError.maximumRetryAfter`.
    public let retryAfter: Duration?
    /// The verifier's verdict when `code` is `.verificationFailed`.
    public let verification: AppStoreVerificationError?
    /// The client's classification when `code` is `.transport`.
    public let transport: HTTPClientError.Code?

    /// Apple documents its rate limits as enforced over an hour; a longer wait is not a real answer.
    public static let maximumRetryAfter: Duration = .seconds(3600)

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, appleErrorCode: Int64? = nil,
                appleErrorMessage: String? = nil, retryAfter: Duration? = nil,
                verification: AppStoreVerificationError? = nil, transport: HTTPClientError.Code? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.appleErrorCode = appleErrorCode
        self.appleErrorMessage = appleErrorMessage
        self.retryAfter = retryAfter
        self.verification = verification
        self.transport = transport
    }

    /// Whether the same call can succeed later. Permanent failures should dead-letter at once: repeating
    /// them only spends Apple's rate limit.
    public var isRetryable: Bool {
        switch code {
        case .rateLimited, .serverError, .requestTimeout, .retryableAppleError: true
        case .verificationFailed: verification?.isRetryable ?? false
        // A shut-down client (the worker is stopping) and unclassified libcurl failures deserve another
        // attempt, as do dropped connections and failed TLS handshakes (the jobs bound how often, see
        // StoreFailures); TLS trust, an unusable URL and an oversized body fail the same way every time.
        case .transport: transport.map { ![.tls, .invalidRequest, .bodyTooLarge].contains($0) } ?? true
        default: false
        }
    }

    public var description: String { "App Store API \(code): \(message)" }
}
