import Foundation

/// A condition that did not become true within its bound.
public struct TimedOut: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

/// Re-checks `condition` until it holds or `timeout` passes, then fails with `message`. For waiting on
/// another process's effects in the database; in-process events use signals instead.
public func eventually(_ message: @autoclosure () -> String, timeout: Duration = .seconds(30),
                       every interval: Duration = .milliseconds(20),
                       _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else {
            throw TimedOut(description: "timed out after \(timeout): \(message())")
        }
        try await Task.sleep(for: interval)
    }
}
