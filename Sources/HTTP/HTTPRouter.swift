/// Maps paths and methods to handlers. Exact paths come first; a prefix route (a path ending in `/`) takes
/// every deeper path under it that has no exact route, for APIs that carry identifiers in the path
/// (`/inApps/v1/subscriptions/{id}`). Both are table lookups, easy to audit.
public struct HTTPRouter: Sendable {
    /// path → method → handler.
    private var routes: [String: [String: HTTPHandler]] = [:]
    /// prefix → method → handler; a prefix always ends in `/`.
    private var prefixRoutes: [String: [String: HTTPHandler]] = [:]

    public init() {}

    /// Registers `handler` for `method` (case-insensitive) on `path`; a later registration replaces an earlier
    /// one. A `GET` route also answers `HEAD` (the server sends the headers without the body). Method `*`
    /// takes every method the path has no route of its own for: a face that answers its own 405s.
    public mutating func route(_ method: String, _ path: String, _ handler: @escaping HTTPHandler) {
        routes[path, default: [:]][method.uppercased()] = handler
    }

    /// Registers `handler` for `method` on every path that starts with `prefix` and continues past it (the
    /// handler parses the rest from `HTTPRequest.path`). A `prefix` not ending in `/` gets one appended, so
    /// `/a` never captures `/ab`. The longest matching prefix wins; exact routes win over prefixes.
    public mutating func route(_ method: String, prefix: String, _ handler: @escaping HTTPHandler) {
        let normalized = prefix.hasSuffix("/") ? prefix : prefix + "/"
        prefixRoutes[normalized, default: [:]][method.uppercased()] = handler
    }

    /// What the server does with a request: run a handler, or answer at once without leaving its thread.
    enum Resolution {
        case handler(HTTPHandler)
        /// Unknown path: 404.
        case notFound
        /// Known path without this method: 405 with the `Allow` header RFC 9110 requires, these methods.
        case methodNotAllowed(allowed: String)
    }

    func resolve(method: String, path: String) -> Resolution {
        guard let methods = routes[path] ?? longestPrefix(of: path) else { return .notFound }
        let method = method.uppercased()
        if let handler = methods[method] ?? (method == "HEAD" ? methods["GET"] : nil) ?? methods["*"] {
            return .handler(handler)
        }
        var allowed = Set(methods.keys)
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return .methodNotAllowed(allowed: allowed.sorted().joined(separator: ", "))
    }

    /// The registered route `path` falls under (its exact path or longest prefix), or nil: a label from a
    /// fixed set for logs and metrics, where the raw path would let clients mint new series at will.
    func route(of path: String) -> String? {
        routes[path] != nil ? path : longestPrefixKey(of: path)
    }

    private func longestPrefix(of path: String) -> [String: HTTPHandler]? {
        longestPrefixKey(of: path).flatMap { prefixRoutes[$0] }
    }

    private func longestPrefixKey(of path: String) -> String? {
        guard !prefixRoutes.isEmpty else { return nil }
        var end = path.endIndex
        // Walk back from the last `/` to the first: the first registered prefix found is the longest.
        while let slash = path[..<end].lastIndex(of: "/") {
            let candidate = String(path[...slash])
            if candidate.count < path.count, prefixRoutes[candidate] != nil { return candidate }
            end = slash
        }
        return nil
    }
}
