import Foundation

/// A bare TCP connection to the local server, for clients that misbehave in ways `HTTPClient` never does
/// (hanging up halfway through a request, trickling a body). Sendable so one thread can write while another
/// reads: the socket is the only state, and the kernel serializes each direction.
public final class RawConnection: @unchecked Sendable {
    private let socket: Int32

    public init(port: UInt16) throws {
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

    public func write(_ text: String) {
        // Every byte, a NUL included (a C string would end there).
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything the server sends until it closes the connection, or nil if it is still open after `limit`.
    public func readUntilClose(within limit: Duration) -> String? {
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
    public func waitForClose(within limit: Duration) -> Bool {
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
