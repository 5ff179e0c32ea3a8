import CCurl

/// Why a request produced no response, classified so retry logic never parses libcurl's messages.
public struct HTTPClientError: Error, CustomStringConvertible, Sendable {
    /// A struct rather than an enum so codes can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The connect or total timeout expired.
        public static let timeout = Code("timeout")
        /// Nothing listens at the address (or a firewall rejected the connection).
        public static let connectionRefused = Code("connection refused")
        /// The connection broke while sending or receiving, or the server closed it without a response.
        public static let connectionReset = Code("connection reset")
        /// The TLS handshake failed without a verdict on the peer's certificate (libcurl's SSL connect error).
        /// OpenSSL reports a peer or middlebox dropping the connection mid-handshake this way, which clears up,
        /// and a peer that never can complete one the same way: an https URL at a plain-HTTP port, no protocol
        /// version or cipher in common. Retry it, but only a bounded few times.
        public static let tlsHandshake = Code("tls handshake")
        /// The host name (or proxy name) did not resolve.
        public static let dns = Code("dns")
        /// The peer's certificate was not trusted for this host, or the client's own TLS setup is unusable.
        public static let tls = Code("tls")
        /// The response body exceeded `maxResponseBytes`.
        public static let bodyTooLarge = Code("body too large")
        /// The request itself is unusable (malformed URL, unsupported scheme, bad header).
        public static let invalidRequest = Code("invalid request")
        /// The client was shut down before the request finished.
        public static let shutdown = Code("shutdown")
        /// Anything else libcurl reported; see `message`.
        public static let other = Code("other")

        public var description: String { name }
    }

    public let code: Code
    /// libcurl's description and detail, or the client's own reason.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "HTTP client error (\(code)): \(message)" }

    /// Classifies a failed transfer. `bodyTooLarge` says whether the write callback aborted it for size:
    /// libcurl reports that only as a generic write error.
    init(curl result: CURLcode, detail: String, bodyTooLarge: Bool) {
        let code: Code = switch result {
        case _ where bodyTooLarge: .bodyTooLarge
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_COULDNT_CONNECT: .connectionRefused
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2_STREAM:
            .connectionReset
        case CURLE_SSL_CONNECT_ERROR: .tlsHandshake
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .dns
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT,
             CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED:
            .tls
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT: .invalidRequest
        default: .other
        }
        let summary = String(cString: curl_easy_strerror(result))
        self.init(code, detail.isEmpty || detail == summary ? summary : "\(summary): \(detail)")
    }
}
