import Foundation
import Synchronization

/// A TCP listener on 127.0.0.1 with a kernel-chosen port that hangs up on every client as soon as its first
/// bytes arrive: for an https:// client, in the middle of the TLS handshake, as a peer or a middlebox that
/// drops connections does. Waiting to read first keeps the hang-up after the client's connect completed, so
/// it is never seen as a refused connection. Accepting and reading block a thread of the listener's own,
/// never the concurrency pool.
public final class HangUpListener: Sendable {
    public enum HangUp: Sendable, CustomStringConvertible {
        /// Abortive close (`SO_LINGER` 0): the client reads "connection reset by peer".
        case reset
        /// Orderly close; the kernel still resets when the client's bytes were not all read.
        case close

        public var description: String { self == .reset ? "reset" : "close" }
    }

    public let port: UInt16
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)

    public init(_ hangUp: HangUp) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ListenerFailure(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard listening else {
            let reason = errno
            Glibc.close(listener)
            throw ListenerFailure(description: "cannot listen on 127.0.0.1: errno \(reason)")
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    break
                }
                // Bounded, so a client that never sends cannot keep the thread.
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = recv(client, &buffer, buffer.count, 0)
                if hangUp == .reset {
                    var option = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
                }
                Glibc.close(client)
            }
            Glibc.close(listener)
        }.start()
    }

    deinit { stop() }

    /// Stops accepting; the listener's thread closes the socket once its `accept` returns.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
    }
}

struct ListenerFailure: Error, CustomStringConvertible {
    let description: String
}
