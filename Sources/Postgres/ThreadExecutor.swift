import CStoreSyncShims
import Foundation

/// A serial executor that owns one OS thread.
///
/// libpq calls block, and blocking a thread of Swift's cooperative pool starves every other task
/// (the pool is only as wide as the machine has cores). An actor whose executor is a `ThreadExecutor`
/// keeps its blocking calls on its own thread, and libpq's one-thread-per-connection rule holds by construction.
final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [UnownedJob] = []
    private var stopping = false

    init(name: String) {
        let thread = Thread { [self] in
            _ = storesync_set_thread_name(name)
            run()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        queue.append(unowned)
        condition.signal()
        condition.unlock()
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets the thread exit once the jobs already queued have run. Call only when nothing will be
    /// enqueued any more (the owning actor has been closed).
    func shutdown() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        var batch: [UnownedJob] = []
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty && stopping {
                condition.unlock()
                return
            }
            swap(&batch, &queue)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedSerialExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
