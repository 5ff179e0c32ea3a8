/// How the webhook/metrics server listens and what it tolerates from clients.
public struct HTTPServerConfiguration: Sendable {
    /// A numeric address or a name resolved once at start; the first address found is bound. An IPv6 address
    /// is given without brackets (`ListenAddress` parses `[::1]:8080` into this and `port`); `::` takes IPv4
    /// clients as well.
    public var host: String = "127.0.0.1"
    /// 0 lets the kernel pick a free port (tests); read the result from `HTTPServer.port`.
    public var port: UInt16 = 0
    /// Larger request bodies get 413 and never reach a handler: no webhook the stores send comes close, and
    /// the cap bounds the memory one client can pin. A body without a declared length that outgrows it ends
    /// its request at once (closed without a response where libmicrohttpd cannot answer mid-body): draining
    /// it to its end would let an endless upload hold the connection.
    public var maxBodyBytes: Int = 64 * 1024
    /// A request whose request target and headers together exceed this many bytes gets 431 and never reaches
    /// a handler: the stores' webhooks send well under 2 KiB, and the cap bounds what one request can pin.
    public var maxHeaderBytes: Int = 16 * 1024
    /// An idle connection (keep-alive or a stalled upload) is closed after this long; whole seconds, at least 1.
    public var connectionTimeout: Duration = .seconds(30)
    /// A request's body must arrive within this long of its headers, however steadily it trickles: the idle
    /// timeout alone lets a client sending one byte every few seconds hold a connection forever. Past it the
    /// request ends and its connection is closed (with 408 where libmicrohttpd can answer mid-body).
    public var bodyTimeout: Duration = .seconds(30)
    /// At most this many open connections from one client address (`nil`: no limit), so one client cannot
    /// fill `maxConnections` and keep the stores' webhooks waiting; further connections from it are refused
    /// at once. Load generators on loopback (benchmarks, simulators) turn it off.
    public var maxConnectionsPerClient: Int? = 64
    /// Called for each request the server answers or drops itself, before any handler (404, 405, 408, 413, 431):
    /// such requests never reach a handler's metrics. Runs on the server's polling thread, so it must be quick.
    public var onRejection: (@Sendable (HTTPServerRejection) -> Void)? = nil
    /// How a refusal the server answers itself is worded (413, 431, 408, and the router's 404 and 405), by
    /// the request's path (still percent-encoded; nil when unknown): an API whose clients parse one error shape
    /// gets it even for these. Runs on the server's polling thread, so it must be quick. By default
    /// `HTTPResponse.error`.
    public var refusal: @Sendable (_ status: Int, _ message: String, _ path: String?) -> HTTPResponse = { status, message, _ in
        HTTPResponse.error(status, message)
    }
    /// At this many open connections libmicrohttpd stops accepting: further clients wait in the kernel's listen
    /// backlog until a connection closes, so a flood cannot exhaust file descriptors.
    public var maxConnections: Int = 512
    /// Serve HTTPS with this PEM certificate (chain) and unencrypted PEM private key; `nil` for plain HTTP.
    public var tls: (certificatePEM: String, privateKeyPEM: String)? = nil

    public init() {}
}
