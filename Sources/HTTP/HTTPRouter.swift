/// Maps exact paths and methods to handlers. Exact matching only: the service's endpoints are a fixed,
/// small set (webhooks, health, metrics), and a table lookup is easy to audit.
public struct HTTPRouter: Sendable {
    /// path → method → handler.
    private var routes: [String: [String: HTTPHandler]] = [:]

    public init() {}

    /// Registers `handler` for `method` (case-insensitive) on `path`; a later registration replaces an earlier
    /// one. A `GET` route also answers `HEAD` (the server sends the headers without the body).
    public mutating func route(_ method: String, _ path: String, _ handler: @escaping HTTPHandler) {
        routes[path, default: [:]][method.uppercased()] = handler
    }

    /// What the server does with a request: run a handler, or answer at once without leaving its thread.
    enum Resolution {
        case handler(HTTPHandler)
        case response(HTTPResponse)
    }

    /// Unknown path → 404; known path without this method → 405 with the `Allow` header RFC 9110 requires.
    func resolve(method: String, path: String) -> Resolution {
        guard let methods = routes[path] else { return .response(.text(404, "not found\n")) }
        let method = method.uppercased()
        if let handler = methods[method] ?? (method == "HEAD" ? methods["GET"] : nil) { return .handler(handler) }
        var allowed = Set(methods.keys)
        if allowed.contains("GET") { allowed.insert("HEAD") }
        var response = HTTPResponse.text(405, "method not allowed\n")
        response.headers.append(("allow", allowed.sorted().joined(separator: ", ")))
        return .response(response)
    }
}
