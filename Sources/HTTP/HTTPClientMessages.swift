import Foundation

/// Settings shared by every request of one `HTTPClient`.
///
/// Proxies come from the standard environment variables (`http_proxy`, `https_proxy`, `all_proxy`), as
/// libcurl reads them by default; `NO_PROXY`/`no_proxy` is honoured by libcurl too.
public struct HTTPClientConfiguration: Sendable {
    /// Extra trust, for tests with a generated CA: a PEM bundle libcurl uses instead of the system bundle file
    /// (the system CA directory is still consulted). `nil` uses the system default. Verification of the peer
    /// certificate and host name is always on, whatever this says.
    public var caFile: String? = nil
    /// Bounds connection setup (TCP and TLS handshake) separately, so a dead host fails fast even when the
    /// total timeout is long.
    public var connectTimeout: Duration = .seconds(5)
    /// The default bound on a whole request (waiting for a free connection to the host, connect, send, wait,
    /// receive); a request may override it.
    public var timeout: Duration = .seconds(30)
    /// Larger response bodies fail with `.bodyTooLarge` instead of growing memory without bound.
    public var maxResponseBytes: Int = 1 << 20
    /// Identifies us in the stores' logs, which helps when asking their support about a request.
    public var userAgent: String = "storesync"
    /// Requests to one host running at once (more wait their turn): enough parallelism for a store API, few
    /// enough that one slow host cannot take every socket. With a slow answer this caps throughput at
    /// `maxRequestsPerHost / latency`; a benchmark against a local simulator with injected latency raises it.
    public var maxRequestsPerHost: Int = 32

    public init() {}
}

/// One outgoing request.
public struct HTTPClientRequest: Sendable {
    public var method: String
    /// An `http` or `https` URL; other schemes are refused (`.invalidRequest`).
    public var url: String
    /// Sent in this order; names and values must not contain CR, LF or NUL (`.invalidRequest`).
    public var headers: [(name: String, value: String)]
    /// Sent as is, with `Content-Length`. `POST`, `PUT` and `PATCH` without a body send an empty one.
    public var body: Data?
    /// Overrides the configuration's total timeout for this request.
    public var timeout: Duration?

    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [],
                body: Data? = nil, timeout: Duration? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// A complete response. Any status is a response, not an error; `HTTPRetry.classify` decides what
/// a status means for retrying.
public struct HTTPClientResponse: Sendable {
    public let status: Int
    /// Names lowercased, in the order received (the final response's headers only, not 1xx ones).
    public let headers: [(name: String, value: String)]
    public let body: Data

    /// Public so callers can test their response handling without a server.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers.map { (name: $0.name.lowercased(), value: $0.value) }
        self.body = body
    }

    /// The first value of header `name`, matched case-insensitively.
    public func header(_ name: String) -> String? {
        firstHeader(name, in: headers)
    }
}
