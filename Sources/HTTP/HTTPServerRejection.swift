/// A request the server answered or dropped itself instead of passing it to a handler, for logging and
/// metrics. Carries nothing the client chose freely, so it can label a metric without growing its label set.
public struct HTTPServerRejection: Sendable, Equatable {
    /// 404 (no route), 405 (route without this method), 408 (body not received in time), 413 (body too large),
    /// 431 (request line and headers too large).
    public let status: Int
    /// The registered route the path matched — an exact path, or a prefix ending in `/` — or nil when it
    /// matched none; never the raw path.
    public let route: String?
    /// A fixed phrase saying why, for logs.
    public let reason: String

    public init(status: Int, route: String?, reason: String) {
        self.status = status
        self.route = route
        self.reason = reason
    }
}
