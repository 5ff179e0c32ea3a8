import Foundation
import HTTP

/// Requests a test server received, in arrival order. (NSLock rather than `Mutex`, which ThreadSanitizer cannot
/// see through on Linux.)
public final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [HTTPRequest] = []

    public init() {}

    public func record(_ request: HTTPRequest) {
        lock.lock()
        received.append(request)
        lock.unlock()
    }

    public var requests: [HTTPRequest] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// The bearer tokens the requests carried, in order.
    public var bearerTokens: [String] {
        requests.compactMap { $0.header("authorization") }.map { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : $0 }
    }
}
