import CCurl
import CStoreSyncShims
import Foundation

/// Runs every transfer of one `HTTPClient` on one dedicated OS thread with libcurl's multi interface.
///
/// libcurl calls block and its handles must not be used from two threads at once; one thread that owns the
/// multi handle keeps both rules without occupying Swift's cooperative pool, and the multi handle's
/// connection cache gives keep-alive reuse (and HTTP/2 multiplexing) across requests. The thread drives
/// libcurl through its socket interface (`curl_multi_socket_action`) from an epoll set, so each wake-up
/// touches only the transfers whose socket or timer fired: with `curl_multi_perform` every wake-up ran all
/// transfers in flight, each with its own poll(2), and a worker waiting on hundreds of slow store calls
/// spent most of its HTTP time there. Other threads talk to it only through `inbox` and `events.wake()`.
final class CurlMultiThread: @unchecked Sendable {
    private struct Inbox {
        var added: [CurlTransfer] = []
        var cancelled: [CurlTransfer] = []
        var stopping = false
        /// Set by the thread, under the lock, just before it frees the multi handle and closes `events`: from
        /// then on nobody may call `events.wake()`.
        var stopped = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let multi: UnsafeMutableRawPointer
    private let events: SocketEvents
    private let inbox = Locked<Inbox>(Inbox())
    /// When libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`; nil for no timer. Thread only.
    private var timerDeadline: ContinuousClock.Instant?
    /// Transfers whose easy handle is in the multi handle. Thread only.
    private var running: [ObjectIdentifier: CurlTransfer] = [:]
    /// Transfers admitted per host, and those waiting for a slot. Thread only.
    private var admission: HostAdmission

    /// `maxHostConnections` bounds what one slow host can take; further transfers to it wait their turn.
    init(maxHostConnections: Int) throws {
        let events = try SocketEvents()
        guard let multi = curl_multi_init() else {
            events.close()
            throw HTTPClientError(.other, "curl_multi_init failed")
        }
        self.multi = multi
        self.events = events
        admission = HostAdmission(limit: maxHostConnections)
        _ = storesync_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxHostConnections)
        // Keep every connection a host may have open once its transfer ends. libcurl's default cache size follows
        // the easy handles added, which fall as a burst's transfers finish: it closed connections the next burst
        // reopened (`bench pipeline --store google` opened one for every three notifications).
        _ = storesync_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(maxHostConnections, 64))
        // The thread keeps `self` alive until the multi handle is freed, so libcurl may hold it unretained.
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = storesync_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
        _ = storesync_curl_multi_setopt_socket_callback(multi) { _, socket, what, context, _ in
            Unmanaged<CurlMultiThread>.fromOpaque(context!).takeUnretainedValue().watch(socket, what)
            return 0
        }
        _ = storesync_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
        _ = storesync_curl_multi_setopt_timer_callback(multi) { _, milliseconds, context in
            Unmanaged<CurlMultiThread>.fromOpaque(context!).takeUnretainedValue().setTimer(milliseconds)
            return 0
        }
        let thread = Thread { [self] in
            _ = storesync_set_thread_name("http-client")
            run()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Queues a transfer for the thread; false once the client has shut down.
    func add(_ transfer: CurlTransfer) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.stopped else { return false }
            inbox.added.append(transfer)
            events.wake()
            return true
        }
    }

    /// Asks the thread to take a transfer out (of libcurl, or of its host's queue) and fail it with
    /// `CancellationError`.
    func cancel(_ transfer: CurlTransfer) {
        inbox.withLock { inbox in
            guard !inbox.stopped else { return }
            inbox.cancelled.append(transfer)
            events.wake()
        }
    }

    /// Fails every unfinished transfer with `.shutdown`, frees libcurl's state and ends the thread.
    func shutdown() async {
        await withCheckedContinuation { continuation in
            let stopped = inbox.withLock { inbox in
                guard !inbox.stopped else { return true }
                inbox.stopping = true
                inbox.stopWaiters.append(continuation)
                events.wake()
                return false
            }
            if stopped { continuation.resume() }
        }
    }

    /// `shutdown` for deinitializers, which cannot wait.
    func requestShutdown() {
        inbox.withLock { inbox in
            guard !inbox.stopped else { return }
            inbox.stopping = true
            events.wake()
        }
    }

    // MARK: The thread

    private func run() {
        var active: Int32 = 0
        while true {
            let (added, cancelled, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.added.removeAll()
                    inbox.cancelled.removeAll()
                }
                return (inbox.added, inbox.cancelled, inbox.stopping)
            }
            for transfer in added where admission.arrive(transfer) { launch(transfer) }
            for transfer in cancelled { withdraw(transfer) }
            if stopping { break }
            let now = ContinuousClock.now
            for transfer in admission.expire(now: now) { transfer.deliver(.failure(Self.waitedTooLong(transfer))) }
            // Returns early when a socket is ready or another thread wakes it; libcurl's timer and the
            // deadlines of transfers waiting for a slot (which have no libcurl timer) bound the wait.
            let wake = [timerDeadline, admission.nextDeadline].compactMap { $0 }.min()
            let wait = wake.map { min(1000, ($0 - now).roundedUpMilliseconds) } ?? 1000
            let ready = events.wait(timeoutMilliseconds: Int32(wait))
            for socket in ready {
                let mask = (socket.readable ? CURL_CSELECT_IN : 0) | (socket.writable ? CURL_CSELECT_OUT : 0)
                    | (socket.failed ? CURL_CSELECT_ERR : 0)
                _ = curl_multi_socket_action(multi, socket.socket, mask, &active)
            }
            // libcurl's timer, when due, and after any wait no socket ended: a timer can then run late, never
            // be lost (libcurl only acts on timers that have expired).
            if ready.isEmpty || timerDeadline.map({ $0 <= .now }) == true {
                timerDeadline = nil
                _ = curl_multi_socket_action(multi, STORESYNC_CURL_SOCKET_TIMEOUT, 0, &active)
            }
            collectFinished()
        }
        let shutdown = HTTPClientError(.shutdown, "the HTTP client was shut down")
        for transfer in admission.drain() { transfer.deliver(.failure(shutdown)) }
        for transfer in running.values {
            _ = curl_multi_remove_handle(multi, transfer.easy)
            transfer.deliver(.failure(shutdown))
        }
        running.removeAll()
        let (late, waiters) = inbox.withLock { inbox in
            inbox.stopped = true
            return (inbox.added, inbox.stopWaiters)
        }
        for transfer in late { transfer.deliver(.failure(shutdown)) }
        _ = curl_multi_cleanup(multi)
        events.close()
        for waiter in waiters { waiter.resume() }
    }

    /// libcurl's socket callback: what to watch `socket` for from now on.
    private func watch(_ socket: curl_socket_t, _ what: Int32) {
        switch what {
        case CURL_POLL_REMOVE: events.unwatch(socket)
        default: events.watch(socket, readable: what & CURL_POLL_IN != 0, writable: what & CURL_POLL_OUT != 0)
        }
    }

    /// libcurl's timer callback: -1 cancels the timer, 0 asks for an action as soon as the loop turns.
    private func setTimer(_ milliseconds: Int) {
        timerDeadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
    }

    /// Puts an admitted transfer into the multi handle. One that cannot run (its time ran out while it
    /// waited for a slot) fails and passes its slot on to the next waiting transfer for its host.
    private func launch(_ admitted: CurlTransfer) {
        var next: CurlTransfer? = admitted
        while let transfer = next {
            guard let failure = enter(transfer) else { return }
            transfer.deliver(.failure(failure))
            next = admission.leave(host: transfer.host)
        }
    }

    private func enter(_ transfer: CurlTransfer) -> HTTPClientError? {
        guard transfer.armTimeout(now: .now) else { return Self.waitedTooLong(transfer) }
        let code = curl_multi_add_handle(multi, transfer.easy)
        guard code == CURLM_OK else {
            return HTTPClientError(.other, "curl_multi_add_handle: \(String(cString: curl_multi_strerror(code)))")
        }
        running[ObjectIdentifier(transfer)] = transfer
        return nil
    }

    private static func waitedTooLong(_ transfer: CurlTransfer) -> HTTPClientError {
        HTTPClientError(.timeout, "timed out waiting for a free connection to \(transfer.host)")
    }

    /// A transfer left the multi handle: its host's next waiting transfer may start.
    private func ended(_ transfer: CurlTransfer) {
        if let next = admission.leave(host: transfer.host) { launch(next) }
    }

    private func withdraw(_ transfer: CurlTransfer) {
        if running.removeValue(forKey: ObjectIdentifier(transfer)) != nil {
            _ = curl_multi_remove_handle(multi, transfer.easy)
            transfer.deliver(.failure(CancellationError()))
            ended(transfer)
        } else if admission.withdraw(transfer) {
            transfer.deliver(.failure(CancellationError()))
        }  // else it already finished
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let result = message.pointee.data.result  // read before removal invalidates the message
            var context: UnsafeMutableRawPointer?
            guard storesync_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &context) == CURLE_OK,
                  let transfer = CurlTransfer.of(context) else { continue }
            transfer.finish(result)
            _ = curl_multi_remove_handle(multi, easy)
            running.removeValue(forKey: ObjectIdentifier(transfer))
            ended(transfer)
        }
    }
}
