import Foundation

/// A value behind a pthread mutex (`NSLock`), for this module and the services that share its threads.
///
/// Used instead of `Synchronization.Mutex` so ThreadSanitizer can check this module: on Linux (Swift 6.3.1)
/// `Mutex` locks through futex calls TSan does not see, so every access inside its `withLock` is reported
/// as a race (verified with a two-thread counter that is correct and still reported).
public final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
