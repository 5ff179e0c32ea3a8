import CCurl

/// An HTTP/1.1 and HTTP/2 client on libcurl for the store APIs.
///
/// All transfers of one client run on one dedicated thread (`CurlMultiThread`); `send` only suspends on a
/// continuation, so any number of requests can be in flight without occupying Swift's cooperative pool.
/// Connections are kept alive and reused per host; at most `maxRequestsPerHost` (default 32) requests per host
/// run at once (HTTP/2 multiplexes them when the server offers it over TLS), later ones wait their turn. TLS
/// verification is always on. Redirects are not followed.
public final class HTTPClient: Sendable {
    private let configuration: HTTPClientConfiguration
    private let loop: CurlMultiThread

    /// Starts the client's thread. Call `shutdown` when done; dropping the client also stops the thread.
    public init(configuration: HTTPClientConfiguration = .init()) throws {
        guard Self.globalInit == CURLE_OK else {
            let reason = String(cString: curl_easy_strerror(Self.globalInit))
            throw HTTPClientError(.other, "curl_global_init failed: \(reason)")
        }
        self.configuration = configuration
        loop = try CurlMultiThread(maxHostConnections: max(1, configuration.maxRequestsPerHost))
    }

    deinit {
        loop.requestShutdown()
    }

    /// libcurl's process-wide initialisation, exactly once (a `static let` is initialised once, thread-safely),
    /// before any handle exists.
    private static let globalInit = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Sends `request` and returns the response, whatever its status. Throws `HTTPClientError` when no
    /// response arrived, and `CancellationError` when the task is cancelled (the transfer is aborted).
    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        try Task.checkCancellation()
        let transfer = try CurlTransfer(request, configuration: configuration)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.start(continuation, on: loop)
            }
        } onCancel: {
            transfer.cancel(on: loop)
        }
    }

    /// Fails requests still in flight with `.shutdown`, closes all connections and ends the client's thread.
    /// Later `send`s fail with `.shutdown`.
    public func shutdown() async {
        await loop.shutdown()
    }
}
