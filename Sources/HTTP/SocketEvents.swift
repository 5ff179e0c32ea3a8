import CStoreSyncShims
import Foundation

/// The readiness source of `CurlMultiThread`: an epoll set of the sockets libcurl asks to be watched, plus
/// an eventfd other threads signal to wake the loop.
///
/// epoll reports only the sockets that are ready, so a wake-up costs the same with 5 or 500 transfers in
/// flight; `curl_multi_poll` walked (and `curl_multi_perform` polled) every transfer on every wake-up.
/// The owning thread alone calls `watch`, `unwatch` and `wait`; `wake` is safe from any thread until
/// `close`.
final class SocketEvents: @unchecked Sendable {
    /// A ready socket and what it is ready for.
    struct Readiness {
        let socket: Int32
        let readable: Bool
        let writable: Bool
        let failed: Bool
    }

    private let epoll: Int32
    private let wakeup: Int32
    private var fds = [Int32](repeating: 0, count: 128)
    private var events = [UInt32](repeating: 0, count: 128)

    init() throws {
        let epoll = storesync_epoll_create()
        guard epoll >= 0 else { throw HTTPClientError(.other, "epoll_create1: \(String(cString: strerror(errno)))") }
        let wakeup = storesync_eventfd_create()
        guard wakeup >= 0, storesync_epoll_watch(epoll, wakeup, STORESYNC_EPOLLIN) == 0 else {
            let reason = String(cString: strerror(errno))
            if wakeup >= 0 { Glibc.close(wakeup) }
            Glibc.close(epoll)
            throw HTTPClientError(.other, "eventfd: \(reason)")
        }
        self.epoll = epoll
        self.wakeup = wakeup
    }

    /// Watches `socket` for reading and/or writing, replacing what it was watched for.
    func watch(_ socket: Int32, readable: Bool, writable: Bool) {
        let interest = (readable ? STORESYNC_EPOLLIN : 0) | (writable ? STORESYNC_EPOLLOUT : 0)
        _ = storesync_epoll_watch(epoll, socket, interest)
    }

    func unwatch(_ socket: Int32) {
        _ = storesync_epoll_unwatch(epoll, socket)
    }

    /// Makes the next (or current) `wait` return.
    func wake() {
        storesync_eventfd_signal(wakeup)
    }

    /// Waits up to `timeoutMilliseconds` and returns the ready sockets; a wake-up returns early with none.
    func wait(timeoutMilliseconds: Int32) -> [Readiness] {
        let count = fds.withUnsafeMutableBufferPointer { fds in
            events.withUnsafeMutableBufferPointer { events in
                storesync_epoll_wait(epoll, fds.baseAddress, events.baseAddress, Int32(fds.count), timeoutMilliseconds)
            }
        }
        var ready: [Readiness] = []
        ready.reserveCapacity(max(0, Int(count)))
        for index in 0..<max(0, Int(count)) {
            let socket = fds[index], bits = events[index]
            if socket == wakeup {
                storesync_eventfd_drain(wakeup)
                continue
            }
            ready.append(Readiness(
                socket: socket,
                readable: bits & (STORESYNC_EPOLLIN | STORESYNC_EPOLLHUP) != 0,
                writable: bits & STORESYNC_EPOLLOUT != 0,
                failed: bits & STORESYNC_EPOLLERR != 0))
        }
        return ready
    }

    /// Frees both descriptors; no call may follow.
    func close() {
        Glibc.close(wakeup)
        Glibc.close(epoll)
    }
}
