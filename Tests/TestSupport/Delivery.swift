import Foundation

/// One result that a thread of ours delivers (Chromium's answer to a command, a page event) and one task awaits
/// with a bound, so a browser that never answers fails the test with a message instead of hanging it. The first
/// delivery wins: the answer, the timeout or the awaiting task's cancellation, whichever comes first. (NSLock
/// rather than `Mutex`, which ThreadSanitizer cannot see through on Linux.)
final class Delivery<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<Value, any Error>?
    private var waiter: CheckedContinuation<Value, any Error>?
    private var timer: Task<Void, Never>?

    /// Whether a result has been delivered (a waiter that timed out counts): what lets registries drop it.
    var isDone: Bool { lock.withLock { result != nil } }

    func deliver(_ delivered: Result<Value, any Error>) {
        lock.lock()
        guard result == nil else { return lock.unlock() }
        result = delivered
        let waiting = waiter, timing = timer
        waiter = nil
        timer = nil
        lock.unlock()
        timing?.cancel()
        waiting?.resume(with: delivered)
    }

    /// The delivered value, or `TimedOut` naming `what` once `timeout` has passed.
    func value(within timeout: Duration, _ what: @escaping @autoclosure @Sendable () -> String) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                lock.lock()
                if let result {
                    lock.unlock()
                    return continuation.resume(with: result)
                }
                waiter = continuation
                timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    self?.deliver(.failure(TimedOut(description: "timed out after \(timeout): \(what())")))
                }
                lock.unlock()
            }
        } onCancel: {
            deliver(.failure(CancellationError()))
        }
    }
}
