import CMicroHTTPD
import CStoreSyncShims
import Foundation
import Synchronization

/// Owns one running libmicrohttpd daemon and the memory it points into (options, TLS strings), and stops
/// it at the latest when released.
///
/// The daemon runs its own polling thread (epoll on Linux) and calls `ServerCore` from there.
final class MHDDaemon: @unchecked Sendable {
    let port: UInt16
    private let daemon: OpaquePointer
    private let core: ServerCore
    private let options: UnsafeMutablePointer<storesync_mhd_options>
    private let certificate: UnsafeMutablePointer<CChar>?
    private let privateKey: UnsafeMutablePointer<CChar>?
    /// The listening socket handed back by `MHD_quiesce_daemon`; ours to close once the daemon stopped.
    private let quiescedSocket = Atomic<Int32>(-1)
    private let stopped = Atomic<Bool>(false)

    init(configuration: HTTPServerConfiguration, core: ServerCore) throws {
        var flags = MHD_USE_AUTO_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ERROR_LOG.rawValue
        if configuration.tls != nil {
            guard MHD_is_feature_supported(.FEATURE_TLS) == .YES else {
                throw HTTPServerError(.tls, "this libmicrohttpd was built without TLS support")
            }
            flags |= MHD_USE_TLS.rawValue
        }
        var address = try Self.resolve(host: configuration.host, port: configuration.port)
        // libmicrohttpd reads the address as a sockaddr_in unless told it is IPv6. Dual stack (the socket's
        // IPV6_V6ONLY off) makes `::` take IPv4 clients too, as listening on "every address" means elsewhere;
        // a specific IPv6 address is unaffected.
        if Int32(address.ss_family) == AF_INET6 { flags |= MHD_USE_DUAL_STACK.rawValue }

        let certificate = configuration.tls.flatMap { strdup($0.certificatePEM) }
        let privateKey = configuration.tls.flatMap { strdup($0.privateKeyPEM) }
        let options = UnsafeMutablePointer<storesync_mhd_options>.allocate(capacity: 1)
        let timeoutSeconds = configuration.connectionTimeout.roundedUpSeconds
        let started: OpaquePointer? = withUnsafePointer(to: &address) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                options.initialize(to: Self.options(flags: flags, address: socketAddress,
                                                    timeoutSeconds: UInt32(clamping: timeoutSeconds),
                                                    connectionLimit: UInt32(clamping: configuration.maxConnections),
                                                    perClientLimit: UInt32(clamping: configuration.maxConnectionsPerClient ?? 0),
                                                    memoryLimit: Self.memoryLimit(forHeaders: configuration.maxHeaderBytes),
                                                    certificate: certificate, privateKey: privateKey,
                                                    context: Unmanaged.passUnretained(core).toOpaque()))
                defer { options.pointee.address = nil }  // only read while starting
                return storesync_mhd_start_daemon(options)
            }
        }
        let messages = core.finishStartup()
        guard let started else {
            Self.release(options: options, certificate: certificate, privateKey: privateKey)
            let reason = messages.isEmpty ? "MHD_start_daemon failed" : messages.joined(separator: "; ")
            let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
            throw HTTPServerError(.cannotListen, "cannot listen on \(host):\(configuration.port): \(reason)")
        }
        self.core = core
        self.options = options
        self.certificate = certificate
        self.privateKey = privateKey
        daemon = started
        port = storesync_mhd_bound_port(started)
    }

    deinit {
        stop()
        Self.release(options: options, certificate: certificate, privateKey: privateKey)
    }

    /// Stops accepting connections at once; requests on open connections continue.
    ///
    /// libmicrohttpd stops polling the listening socket but leaves it open (its thread may still hold it),
    /// so connection attempts would hang in the backlog; shutting the socket down makes the kernel refuse
    /// them immediately, while the descriptor stays valid until `stop` closes it.
    func quiesce() {
        let socket = MHD_quiesce_daemon(daemon)
        guard socket >= 0 else { return }
        shutdown(socket, Int32(SHUT_RDWR))
        quiescedSocket.store(socket, ordering: .relaxed)
    }

    /// Closes every connection and joins libmicrohttpd's thread; idempotent. Blocks briefly.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        core.abandonSuspended()
        MHD_stop_daemon(daemon)
        let socket = quiescedSocket.load(ordering: .relaxed)
        if socket >= 0 { close(socket) }
    }

    /// Each connection's pool: twice the header limit, at least libmicrohttpd's default 32 KiB, so that headers
    /// somewhat past the limit still fit and reach `ServerCore`, which refuses them with a JSON 431; only a
    /// client sending more than the pool holds meets libmicrohttpd's own (HTML) 431. Not more: libmicrohttpd
    /// clears the pool between requests, so a larger one costs every request its memset.
    static func memoryLimit(forHeaders maxHeaderBytes: Int) -> Int {
        max(32 * 1024, maxHeaderBytes.multipliedReportingOverflow(by: 2).partialValue)
    }

    private static func options(flags: UInt32, address: UnsafePointer<sockaddr>, timeoutSeconds: UInt32,
                                connectionLimit: UInt32, perClientLimit: UInt32, memoryLimit: Int,
                                certificate: UnsafePointer<CChar>?,
                                privateKey: UnsafePointer<CChar>?, context: UnsafeMutableRawPointer)
        -> storesync_mhd_options {
        var options = storesync_mhd_options()
        options.flags = flags
        options.address = address
        options.connection_timeout_seconds = timeoutSeconds
        options.connection_limit = connectionLimit
        options.per_ip_connection_limit = perClientLimit
        options.connection_memory_limit = memoryLimit
        options.tls_certificate_pem = certificate
        options.tls_key_pem = privateKey
        options.context = context
        options.uri_logger = { cls, uri, connection in
            guard let cls, let connection else { return nil }
            let target = uri.map { String(cString: $0) } ?? "/"
            return Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().begin(connection: connection,
                                                                                      target: target)
        }
        options.access_handler = { cls, _, url, method, _, upload, uploadSize, context in
            guard let cls, let url, let method, let uploadSize, let exchange = context?.pointee else { return .NO }
            return Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
                .advance(Unmanaged<ServerExchange>.fromOpaque(exchange).takeUnretainedValue(), method: method,
                         path: url, upload: upload, uploadSize: uploadSize)
        }
        options.request_completed = { cls, _, context, termination in
            guard let cls, let exchange = context?.pointee else { return }
            context?.pointee = nil
            Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
                .complete(exchange, timedOut: termination == .REQUEST_TERMINATED_TIMEOUT_REACHED)
        }
        options.connection_notify = { cls, _, _, code in
            guard let cls, code == .CONNECTION_NOTIFY_STARTED else { return }
            Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().connectionStarted()
        }
        options.error_logger = { cls, message in
            guard let cls, let message else { return }
            Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().log(String(cString: message))
        }
        return options
    }

    /// The first address `host` resolves to, with `port`.
    private static func resolve(host: String, port: UInt16) throws -> sockaddr_storage {
        guard !host.hasPrefix("[") else {
            throw HTTPServerError(.invalidAddress, "\(host): give an IPv6 host without brackets here (they belong in "
                                  + "HOST:PORT text, which ListenAddress reads)")
        }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0 else {
            throw HTTPServerError(.invalidAddress, "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(found) }
        guard let found, let address = found.pointee.ai_addr else {
            throw HTTPServerError(.invalidAddress, "\(host) resolves to no address")
        }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(found.pointee.ai_addrlen)))
        }
        return storage
    }

    private static func release(options: UnsafeMutablePointer<storesync_mhd_options>,
                                certificate: UnsafeMutablePointer<CChar>?, privateKey: UnsafeMutablePointer<CChar>?) {
        options.deallocate()
        free(certificate)
        if let privateKey { explicit_bzero(privateKey, strlen(privateKey)) }
        free(privateKey)
    }
}
