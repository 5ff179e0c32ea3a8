import Foundation

/// A one-shot signal a handler awaits and a test opens: holds a request inside its handler for exactly as long
/// as the test needs, without timing assumptions. (NSLock rather than `Mutex`, which ThreadSanitizer cannot
/// see through on Linux.)
public final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    public func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            guard !isOpen else {
                lock.unlock()
                return continuation.resume()
            }
            waiters.append(continuation)
            lock.unlock()
        }
    }

    public func open() {
        lock.lock()
        isOpen = true
        let woken = waiters
        waiters = []
        lock.unlock()
        for waiter in woken { waiter.resume() }
    }
}
