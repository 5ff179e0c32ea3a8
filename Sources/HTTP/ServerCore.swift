import CMicroHTTPD
import CStoreSyncShims
import Foundation
import Logging
import Synchronization

/// What libmicrohttpd's callbacks share with `HTTPServer`, passed to them unretained as `cls` (the daemon
/// owner keeps it alive until `MHD_stop_daemon` has returned).
///
/// All callbacks run on libmicrohttpd's single polling thread and return quickly: handlers run as Swift
/// tasks while their connection is suspended, and the response is queued when the resumed connection
/// calls back.
final class ServerCore: Sendable {
    private let router: HTTPRouter
    private let maxBodyBytes: Int
    private let maxHeaderBytes: Int
    private let bodyTimeout: Duration
    /// The configured idle timeout in whole seconds, restored once a body is in.
    private let idleTimeoutSeconds: Int
    private let onRejection: (@Sendable (HTTPServerRejection) -> Void)?
    private let refusal: @Sendable (Int, String, String?) -> HTTPResponse
    private let logger = Logger(component: "http-server")
    /// Requests between their request line and their completion callback (the response fully sent or the
    /// connection gone).
    let inFlight = Atomic<Int>(0)
    let connectionsAccepted = Atomic<Int>(0)
    /// Set when a graceful stop starts: responses then carry `Connection: close`, so keep-alive clients
    /// move to another instance instead of reusing a connection that is about to close.
    let draining = Atomic<Bool>(false)
    /// Exchanges whose connection is suspended, so a stop can resume them; `closed` once the daemon stops.
    private let suspended = Locked<(closed: Bool, exchanges: [ObjectIdentifier: ServerExchange])>((false, [:]))
    /// libmicrohttpd's messages while the daemon starts, for the start error; `nil` once it runs.
    private let startupMessages = Locked<[String]?>([])

    init(router: HTTPRouter, configuration: HTTPServerConfiguration) {
        self.router = router
        maxBodyBytes = configuration.maxBodyBytes
        maxHeaderBytes = configuration.maxHeaderBytes
        bodyTimeout = configuration.bodyTimeout
        idleTimeoutSeconds = configuration.connectionTimeout.roundedUpSeconds
        onRejection = configuration.onRejection
        refusal = configuration.refusal
    }

    // MARK: Callbacks (libmicrohttpd's thread)

    /// URI log callback: the first sight of a request. The returned context is released by `complete`.
    func begin(connection: OpaquePointer, target: String) -> UnsafeMutableRawPointer {
        inFlight.add(1, ordering: .relaxed)
        return Unmanaged.passRetained(ServerExchange(connection: connection, target: target)).toOpaque()
    }

    /// Completion callback: called once per request whatever happened to it, even on client disconnect. A
    /// request whose connection timed out while it was still arriving was cut off by the server: reported.
    func complete(_ context: UnsafeMutableRawPointer, timedOut: Bool) {
        let exchange = Unmanaged<ServerExchange>.fromOpaque(context)
        if timedOut, case .receiving = exchange.takeUnretainedValue().phase.withLock({ $0 }) {
            reject(HTTPServerRejection(status: 408, route: exchange.takeUnretainedValue().route,
                                       reason: "connection timed out before the request arrived"))
        }
        exchange.release()
        inFlight.subtract(1, ordering: .relaxed)
    }

    func connectionStarted() {
        connectionsAccepted.add(1, ordering: .relaxed)
    }

    /// One access-handler call: headers complete, a piece of body, the end of the body, or a resumed
    /// connection whose handler has answered.
    func advance(_ exchange: ServerExchange, method: UnsafePointer<CChar>, path: UnsafePointer<CChar>,
                 upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>) -> MHD_Result {
        if !exchange.headersSeen {
            exchange.headersSeen = true
            exchange.route = router.route(of: String(cString: path))
            exchange.bodyDeadline = ContinuousClock.now + bodyTimeout
            exchange.headers = Self.headers(of: exchange.connection)
            let headerBytes = exchange.headers.reduce(exchange.target.utf8.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
            if headerBytes > maxHeaderBytes {
                return refuse(exchange, status: 431, reason: "request headers too large")
            }
            // A declared oversized body is refused before it is read; libmicrohttpd then closes the connection.
            if let length = MHD_lookup_connection_value(exchange.connection, .HEADER_KIND, "Content-Length"),
               let declared = Int(String(cString: length)), declared > maxBodyBytes {
                return refuse(exchange, status: 413, reason: "declared body too large")
            }
            shortenTimeout(of: exchange)
            return .YES
        }
        if uploadSize.pointee > 0 {
            let count = uploadSize.pointee
            uploadSize.pointee = 0
            // Both end the request at once: draining an unbounded or endless body would hold the connection.
            guard ContinuousClock.now < exchange.bodyDeadline else {
                return refuse(exchange, status: 408, reason: "body not received in time")
            }
            guard let upload, exchange.body.count + count <= maxBodyBytes else {
                exchange.body = Data()
                return refuse(exchange, status: 413, reason: "body too large")
            }
            exchange.body.append(UnsafeRawPointer(upload).assumingMemoryBound(to: UInt8.self), count: count)
            shortenTimeout(of: exchange)
            return .YES
        }
        switch exchange.phase.withLock({ $0 }) {
        case .receiving:
            if exchange.timeoutShortened {
                exchange.timeoutShortened = false
                _ = storesync_mhd_set_connection_timeout(exchange.connection, UInt32(clamping: idleTimeoutSeconds))
            }
            return dispatch(exchange, method: String(cString: method), path: String(cString: path))
        case .handling: return .YES
        case .responded(let response): return queue(response, on: exchange.connection)
        case .abandoned: return .NO
        }
    }

    /// libmicrohttpd's error log: collected while starting (for the start error), then logged at debug level
    /// (a client's failed TLS handshake or reset connection is routine, not an operator's concern).
    func log(_ message: String) {
        let collected = startupMessages.withLock { messages in
            guard messages != nil else { return false }
            messages?.append(message)
            return true
        }
        if !collected { logger.debug("libmicrohttpd", ["detail": .string(message)]) }
    }

    /// Ends start-up message collection and returns what was collected.
    func finishStartup() -> [String] {
        startupMessages.withLock { messages in
            defer { messages = nil }
            return messages ?? []
        }
    }

    // MARK: Stopping (any thread)

    /// Resumes every suspended connection as abandoned and refuses new suspensions: libmicrohttpd must not
    /// be stopped with suspended connections, and handlers still running must not touch its connections.
    func abandonSuspended() {
        let exchanges = suspended.withLock { state in
            state.closed = true
            return Array(state.exchanges.values)
        }
        for exchange in exchanges { resume(exchange, as: .abandoned) }
    }

    // MARK: Private

    /// Answers a request still arriving with `status` and ends its connection. libmicrohttpd 0.9 refuses a
    /// response before the body has ended; the connection is then closed without one, which still frees it.
    private func refuse(_ exchange: ServerExchange, status: Int, reason: String) -> MHD_Result {
        reject(HTTPServerRejection(status: status, route: exchange.route, reason: reason))
        let message = switch status {
        case 413: "request body too large: at most \(maxBodyBytes) bytes"
        case 431: "request line and headers too large: at most \(maxHeaderBytes) bytes"
        default: "request body not received in time"
        }
        let path = exchange.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        var response = refusal(status, message, path)
        response.headers.append(("connection", "close"))
        return queue(response, on: exchange.connection, quietly: true) == .YES ? .YES : .NO
    }

    /// Logs a request the server turned away itself and hands it to the configured observer.
    private func reject(_ rejection: HTTPServerRejection) {
        // A stray path or method is routine (scanners); a body cut off may be a client in trouble or an attack.
        let level: LogLevel = rejection.status == 404 || rejection.status == 405 ? .info : .warning
        logger.log(level, "request refused", [
            "status": .int(rejection.status), "route": .string(rejection.route ?? "-"), "reason": .string(rejection.reason),
        ])
        onRejection?(rejection)
    }

    /// Lowers the connection's idle timeout to the time left until the body deadline, so a client that stops
    /// sending is cut off by then rather than a full idle timeout later.
    private func shortenTimeout(of exchange: ServerExchange) {
        let left = (exchange.bodyDeadline - ContinuousClock.now).roundedUpSeconds
        guard left < idleTimeoutSeconds else { return }
        exchange.timeoutShortened = true
        _ = storesync_mhd_set_connection_timeout(exchange.connection, UInt32(clamping: left))
    }

    private func peerAddress(of exchange: ServerExchange) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard storesync_mhd_client_address(exchange.connection, &buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func dispatch(_ exchange: ServerExchange, method: String, path: String) -> MHD_Result {
        let handler: HTTPHandler
        switch router.resolve(method: method, path: path) {
        case .notFound:
            reject(HTTPServerRejection(status: 404, route: exchange.route, reason: "no route"))
            return queue(refusal(404, "not found", path), on: exchange.connection)
        case .methodNotAllowed(let allowed):
            reject(HTTPServerRejection(status: 405, route: exchange.route, reason: "method not allowed"))
            var response = refusal(405, "method not allowed", path)
            response.headers.append(("allow", allowed))
            return queue(response, on: exchange.connection)
        case .handler(let found): handler = found
        }
        let request = HTTPRequest(method: method, path: path, query: exchange.query,
                                  headers: exchange.headers, body: exchange.body, peerAddress: peerAddress(of: exchange))
        exchange.body = Data()
        exchange.headers = []
        exchange.phase.withLock { phase in
            phase = .handling
            MHD_suspend_connection(exchange.connection)
        }
        let registered = suspended.withLock { state in
            guard !state.closed else { return false }
            state.exchanges[ObjectIdentifier(exchange)] = exchange
            return true
        }
        guard registered else {
            resume(exchange, as: .abandoned)
            return .YES
        }
        Task {
            let response = await handler(request)
            self.resume(exchange, as: .responded(response))
            self.suspended.withLock { _ = $0.exchanges.removeValue(forKey: ObjectIdentifier(exchange)) }
        }
        return .YES
    }

    /// Moves a handling exchange on and resumes its connection; a no-op if something else got there first
    /// (the handler answered, or a stop abandoned it). Deregistration happens only after this, so a stop
    /// always sees an exchange that is still suspended.
    private func resume(_ exchange: ServerExchange, as next: ServerExchange.Phase) {
        exchange.phase.withLock { phase in
            guard case .handling = phase else { return }
            phase = next
            MHD_resume_connection(exchange.connection)
        }
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer, quietly: Bool = false) -> MHD_Result {
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            .RESPMEM_MUST_COPY)
        }
        guard let created else { return .NO }
        defer { MHD_destroy_response(created) }
        for (name, value) in response.headers where MHD_add_response_header(created, name, value) == .NO {
            logger.debug("response header refused by libmicrohttpd", ["header": .string(name)])
        }
        if draining.load(ordering: .relaxed) { _ = MHD_add_response_header(created, "Connection", "close") }
        let queued = MHD_queue_response(connection, UInt32(clamping: response.status), created)
        if queued == .NO, !quietly {  // an invalid status; libmicrohttpd closes the connection
            logger.warning("libmicrohttpd refused the response", ["status": .int(response.status)])
        }
        return queued
    }

    private static func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { context, _, name, value in
                guard let context, let name else { return .YES }
                let headers = context.assumingMemoryBound(to: [(name: String, value: String)].self)
                headers.pointee.append((String(cString: name).lowercased(), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, pointer)
        }
        return headers
    }
}
