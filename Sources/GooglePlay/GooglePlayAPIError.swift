import HTTP

/// Why a Play Developer API call (or the access token it needed) failed, classified so the job layer can decide
/// between retrying later and dead-lettering without reading status codes or Google's error reasons itself.
public struct GooglePlayAPIError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// 429, or a wait the connection's own pacing would impose beyond its bound: try again after
        /// `retryAfter` (or the backoff when none was named).
        public static let rateLimited = Code("rate limited")
        /// Google answered 5xx; try again later.
        public static let serverError = Code("server error")
        /// 404: the purchase token or order is unknown for this package (a token of another app, a typo).
        public static let notFound = Code("not found")
        /// 410: the purchase token is no longer available (expired more than about 60 days ago, or replaced).
        public static let gone = Code("gone")
        /// 401: Google refused the access token even after a fresh one was fetched.
        public static let unauthorized = Code("unauthorized")
        /// 403: the service account may not do this for this app (Play Console permissions).
        public static let forbidden = Code("forbidden")
        /// Any other 4xx: the request is wrong as it stands (`reason` says why, e.g. `invalid`).
        public static let rejected = Code("rejected")
        /// No response arrived (`transport` says why); retryable unless the failure is about configuration.
        public static let transport = Code("transport")
        /// A response that is not what the endpoint documents (not JSON, missing fields, unexpected status).
        public static let invalidResponse = Code("invalid response")
        /// The request was refused before sending (a malformed token, order id or product id).
        public static let invalidRequest = Code("invalid request")
        /// The token endpoint answered `invalid_grant`: the assertion was refused, because this host's clock is
        /// off or the service-account key was deleted or disabled. Permanent until an operator acts.
        public static let invalidGrant = Code("invalid grant")
        /// The token endpoint refused the request for another reason (`invalid_client`, `unauthorized_client`,
        /// `invalid_scope`…): a configuration problem.
        public static let tokenRejected = Code("token rejected")
        /// The token endpoint could not be reached or answered 429/5xx: retryable.
        public static let tokenUnavailable = Code("token unavailable")
        /// The token endpoint answered 2xx without a usable access token.
        public static let tokenInvalidResponse = Code("token invalid response")
        /// The connection's settings contradict each other or Google's limits; raised when the client is made.
        public static let invalidConfiguration = Code("invalid configuration")

        public var description: String { name }
    }

    public let code: Code
    /// What failed, for logs and dead letters; never contains the access token or the assertion.
    public let message: String
    public let httpStatus: Int?
    /// Google's `error.errors[0].reason` (`permissionDenied`, `subscriptionPurchaseNoLongerAvailable`…) or, from
    /// the token endpoint, its `error` (`invalid_grant`…).
    public let reason: String?
    /// The wait Google asked for with `Retry-After`, bounded to `maximumRetryAfter`.
    public let retryAfter: Duration?
    /// The client's classification when `code` is `.transport` or `.tokenUnavailable` without a response.
    public let transport: HTTPClientError.Code?

    /// Google's quotas are per minute; a longer wait than an hour is not a real answer.
    public static let maximumRetryAfter: Duration = .seconds(3600)

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, reason: String? = nil, retryAfter: Duration? = nil,
                transport: HTTPClientError.Code? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.reason = reason
        self.retryAfter = retryAfter
        self.transport = transport
    }

    /// Whether the same call can succeed soon. Permanent failures should not be repeated at the usual pace: that
    /// only spends the connection's quota. (`.unauthorized` and `.forbidden` can clear once Play Console permissions
    /// apply, hours later; the job layer retries those slowly rather than dead-lettering them.)
    public var isRetryable: Bool {
        switch code {
        case .rateLimited, .serverError: true
        // A shut-down client (the worker is stopping) and unclassified libcurl failures deserve another attempt;
        // TLS trust, an unusable URL and an oversized body fail the same way every time.
        case .transport, .tokenUnavailable: transport.map { ![.tls, .invalidRequest, .bodyTooLarge].contains($0) } ?? true
        default: false
        }
    }

    public var description: String { "Google Play API \(code): \(message)" }
}
