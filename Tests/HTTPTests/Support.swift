import Foundation
import HTTP
import TestSupport


/// A server on 127.0.0.1 with a kernel-chosen port, and its base URL.
func startServer(_ configure: (inout HTTPRouter) -> Void,
                 configuration: HTTPServerConfiguration = HTTPServerConfiguration()) throws -> (HTTPServer, String) {
    var router = HTTPRouter()
    configure(&router)
    let server = try HTTPServer(configuration: configuration, router: router)
    let scheme = configuration.tls == nil ? "http" : "https"
    return (server, "\(scheme)://127.0.0.1:\(server.port)")
}

/// A server whose `path` route counts each request that reaches it and holds it until `gate` opens, then
/// answers `answer`: how tests keep requests in flight on demand. `configure` adds other routes.
func startHoldingServer(_ path: String, answer: String, configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
                        _ configure: (inout HTTPRouter) -> Void = { _ in }) throws
    -> (server: HTTPServer, base: String, gate: Gate, entered: Counter)
{
    let gate = Gate()
    let entered = Counter()
    let (server, base) = try startServer({ router in
        router.route("GET", path) { _ in
            entered.increment()
            await gate.wait()
            return .text(200, answer)
        }
        configure(&router)
    }, configuration: configuration)
    return (server, base, gate, entered)
}

/// Client requests default to a short timeout so a broken server fails a test instead of hanging it.
func get(_ url: String, timeout: Duration = .seconds(10)) -> HTTPClientRequest {
    HTTPClientRequest(url: url, timeout: timeout)
}

/// The code of an `HTTPClientError` thrown by `body`, or nil when it succeeded or threw something else.
func clientErrorCode(_ body: () async throws -> HTTPClientResponse) async -> HTTPClientError.Code? {
    do {
        _ = try await body()
        return nil
    } catch let error as HTTPClientError {
        return error.code
    } catch {
        return nil
    }
}

/// The requests a server turned away itself, as its `onRejection` observer saw them.
final class Rejections: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [HTTPServerRejection] = []

    func record(_ rejection: HTTPServerRejection) {
        lock.lock()
        seen.append(rejection)
        lock.unlock()
    }

    var all: [HTTPServerRejection] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }
}
