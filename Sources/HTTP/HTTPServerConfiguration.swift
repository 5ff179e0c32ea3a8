/// How the webhook/metrics server listens and what it tolerates from clients.
public struct HTTPServerConfiguration: Sendable {
    /// A numeric address or a name resolved once at start; the first address found is bound.
    public var host: String = "127.0.0.1"
    /// 0 lets the kernel pick a free port (tests); read the result from `HTTPServer.port`.
    public var port: UInt16 = 0
    /// Larger request bodies get 413 and never reach a handler: no webhook the stores send comes close, and
    /// the cap bounds the memory one client can pin.
    public var maxBodyBytes: Int = 64 * 1024
    /// An idle connection (keep-alive or a stalled upload) is closed after this long; whole seconds, at least 1.
    public var connectionTimeout: Duration = .seconds(30)
    /// At this many open connections libmicrohttpd stops accepting: further clients wait in the kernel's listen
    /// backlog until a connection closes, so a flood cannot exhaust file descriptors.
    public var maxConnections: Int = 512
    /// Serve HTTPS with this PEM certificate (chain) and unencrypted PEM private key; `nil` for plain HTTP.
    public var tls: (certificatePEM: String, privateKeyPEM: String)? = nil

    public init() {}
}
