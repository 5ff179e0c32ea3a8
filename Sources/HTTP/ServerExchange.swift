import Foundation

/// One request on the server, from its request line to libmicrohttpd's completion callback.
///
/// libmicrohttpd holds one retained reference as the request's context (taken in the URI log callback,
/// released in the completion callback, which it always calls); a running handler task holds another.
/// `headersSeen`, `headers`, `body`, `bodyDeadline`, `timeoutShortened` and `route` are touched only on libmicrohttpd's
/// thread; `phase` is guarded by its mutex.
final class ServerExchange: @unchecked Sendable {
    enum Phase: Sendable {
        /// Headers or body are still arriving.
        case receiving
        /// The connection is suspended while the handler task runs.
        case handling
        /// The handler answered and the connection was resumed to send the response.
        case responded(HTTPResponse)
        /// The server stopped before the handler answered; the connection was resumed to be closed.
        case abandoned
    }

    let connection: OpaquePointer
    /// The request target exactly as sent (path and query, still percent-encoded).
    let target: String
    var headersSeen = false
    var body = Data()
    /// The request's headers (names lowercased), read once when they are complete.
    var headers: [(name: String, value: String)] = []
    /// When the body must have arrived (`HTTPServerConfiguration.bodyTimeout` after the headers).
    var bodyDeadline = ContinuousClock.now
    /// Whether the connection's idle timeout was shortened to meet `bodyDeadline`, and must be restored.
    var timeoutShortened = false
    /// The registered route of the path (see `HTTPRouter.route(of:)`), once the headers are in.
    var route: String?
    /// Every transition into or out of `.handling` happens under this lock together with the matching
    /// `MHD_suspend_connection`/`MHD_resume_connection`, so each suspension is resumed exactly once.
    let phase = Locked<Phase>(.receiving)

    init(connection: OpaquePointer, target: String) {
        self.connection = connection
        self.target = target
    }

    /// The raw query: everything after the first `?` of the target.
    var query: String? {
        target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
    }
}
