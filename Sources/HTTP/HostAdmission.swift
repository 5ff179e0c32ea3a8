/// Per-host admission for `CurlMultiThread`: at most `limit` transfers per host are inside libcurl, the rest
/// wait here in arrival order.
///
/// libcurl 7.88 can queue transfers itself once `CURLMOPT_MAX_HOST_CONNECTIONS` is reached, but its pending
/// queue wakes one waiter per finished transfer and loses wake-ups when another transfer takes the freed
/// connection first: measured here, queued transfers then sat idle until the next poll timeout. Admitting
/// no more transfers than the per-host connection cap keeps libcurl's queue empty.
struct HostAdmission {
    let limit: Int
    private var active: [String: Int] = [:]
    private var waiting: [String: [CurlTransfer]] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether `transfer` may start now; if not, it waits until `leave` hands it out.
    mutating func arrive(_ transfer: CurlTransfer) -> Bool {
        guard active[transfer.host, default: 0] < limit else {
            waiting[transfer.host, default: []].append(transfer)
            return false
        }
        active[transfer.host, default: 0] += 1
        return true
    }

    /// A started transfer to `host` ended; returns the next waiting transfer for that host, now admitted.
    mutating func leave(host: String) -> CurlTransfer? {
        if var queue = waiting[host], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[host] = queue.isEmpty ? nil : queue
            return next  // takes over the slot
        }
        let remaining = active[host, default: 1] - 1
        active[host] = remaining > 0 ? remaining : nil
        return nil
    }

    /// Takes a waiting transfer out of its queue (cancellation); false if it is not waiting.
    mutating func withdraw(_ transfer: CurlTransfer) -> Bool {
        guard var queue = waiting[transfer.host], let index = queue.firstIndex(where: { $0 === transfer }) else {
            return false
        }
        queue.remove(at: index)
        waiting[transfer.host] = queue.isEmpty ? nil : queue
        return true
    }

    /// Takes out the waiting transfers whose deadline has passed: their timeout runs while they wait.
    mutating func expire(now: ContinuousClock.Instant) -> [CurlTransfer] {
        var expired: [CurlTransfer] = []
        for (host, queue) in waiting where queue.contains(where: { $0.deadline <= now }) {
            expired += queue.filter { $0.deadline <= now }
            let remaining = queue.filter { $0.deadline > now }
            waiting[host] = remaining.isEmpty ? nil : remaining
        }
        return expired
    }

    /// The earliest deadline of a waiting transfer: the thread must wake up by then to fail it.
    var nextDeadline: ContinuousClock.Instant? {
        waiting.values.lazy.flatMap { $0 }.map(\.deadline).min()
    }

    /// Every waiting transfer, removed (shutdown).
    mutating func drain() -> [CurlTransfer] {
        defer { waiting = [:] }
        return waiting.values.flatMap { $0 }
    }
}
