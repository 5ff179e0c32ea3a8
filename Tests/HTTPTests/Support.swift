import Foundation
import HTTP
import TestSupport


/// A server on 127.0.0.1 with a kernel-chosen port, and its base URL.
func startServer(_ configure: (inout HTTPRouter) -> Void,
                 configuration: HTTPServerConfiguration = HTTPServerConfiguration()) throws -> (HTTPServer, String) {
    var router = HTTPRouter()
    configure(&router)
    let server = try HTTPServer(configuration: configuration, router: router)
    let scheme = configuration.tls == nil ? "http" : "https"
    return (server, "\(scheme)://127.0.0.1:\(server.port)")
}

/// A server whose `path` route counts each request that reaches it and holds it until `gate` opens, then
/// answers `answer`: how tests keep requests in flight on demand. `configure` adds other routes.
func startHoldingServer(_ path: String, answer: String, configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
                        _ configure: (inout HTTPRouter) -> Void = { _ in }) throws
    -> (server: HTTPServer, base: String, gate: Gate, entered: Counter)
{
    let gate = Gate()
    let entered = Counter()
    let (server, base) = try startServer({ router in
        router.route("GET", path) { _ in
            entered.increment()
            await gate.wait()
            return .text(200, answer)
        }
        configure(&router)
    }, configuration: configuration)
    return (server, base, gate, entered)
}

/// Client requests default to a short timeout so a broken server fails a test instead of hanging it.
func get(_ url: String, timeout: Duration = .seconds(10)) -> HTTPClientRequest {
    HTTPClientRequest(url: url, timeout: timeout)
}

/// The code of an `HTTPClientError` thrown by `body`, or nil when it succeeded or threw something else.
func clientErrorCode(_ body: () async throws -> HTTPClientResponse) async -> HTTPClientError.Code? {
    do {
        _ = try await body()
        return nil
    } catch let error as HTTPClientError {
        return error.code
    } catch {
        return nil
    }
}

/// A bare TCP connection to the local server, for clients that misbehave in ways `HTTPClient` never does
/// (hanging up halfway through a request, trickling a body). Sendable so one thread can write while another
/// reads: the socket is the only state, and the kernel serializes each direction.
final class RawConnection: @unchecked Sendable {
    private let socket: Int32

    init(port: UInt16) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            throw TimedOut(description: "timed out waiting for a TCP connection to port \(port)")
        }
    }

    deinit { close(socket) }

    func write(_ text: String) {
        _ = text.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// Everything the server sends until it closes the connection, or nil if it is still open after `limit`.
    func readUntilClose(within limit: Duration) -> String? {
        var timeout = timeval(tv_sec: Int(limit.components.seconds), tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            return count == 0 || errno == ECONNRESET ? String(decoding: received, as: UTF8.self) : nil
        }
    }

    /// Reads and discards until the server closes the connection; false if it is still open after `limit`.
    func waitForClose(within limit: Duration) -> Bool {
        var timeout = timeval(tv_sec: Int(limit.components.seconds), tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count > 0 { continue }
            return count == 0 || errno == ECONNRESET
        }
    }
}

/// The requests a server turned away itself, as its `onRejection` observer saw them.
final class Rejections: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [HTTPServerRejection] = []

    func record(_ rejection: HTTPServerRejection) {
        lock.lock()
        seen.append(rejection)
        lock.unlock()
    }

    var all: [HTTPServerRejection] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }
}
