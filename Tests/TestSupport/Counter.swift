import Synchronization

/// Counts events across tasks and threads: handler entries, requests a route answered.
public final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// The count after this call.
    @discardableResult
    public func increment() -> Int { count.add(1, ordering: .relaxed).newValue }

    public var value: Int { count.load(ordering: .relaxed) }
}
