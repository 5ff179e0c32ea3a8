import CCurl
import CStoreSyncShims
import Foundation

/// One request's libcurl easy handle and everything libcurl reads or writes during the transfer.
///
/// Built on the caller's task; once handed to `CurlMultiThread` only that thread touches the handle and
/// the response buffers. libcurl's callbacks find the transfer through an unretained pointer
/// (`CURLOPT_PRIVATE`, `WRITEDATA`, `HEADERDATA`); the multi thread holds a strong reference while the
/// handle is in the multi handle. The caller learns the outcome through `outcome`, exactly once.
final class CurlTransfer: @unchecked Sendable {
    private enum Outcome {
        case notStarted
        /// Cancelled before it was handed to the multi thread.
        case cancelledEarly
        case waiting(CheckedContinuation<HTTPClientResponse, any Error>)
        case delivered
    }

    let easy: UnsafeMutableRawPointer
    /// `scheme://host:port`: the unit of connection reuse and of `HostAdmission`.
    let host: String
    /// The end of the request's total timeout, counted from `send` (so waiting for a connection slot counts).
    let deadline: ContinuousClock.Instant
    private let outcome = Locked<Outcome>(.notStarted)
    private let maxResponseBytes: Int
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    // Multi thread only, while the transfer runs.
    private var body = Data()
    private var headers: [(name: String, value: String)] = []
    private var bodyTooLarge = false

    init(_ request: HTTPClientRequest, configuration: HTTPClientConfiguration) throws {
        guard let easy = curl_easy_init() else { throw HTTPClientError(.other, "curl_easy_init failed") }
        self.easy = easy
        host = Self.host(of: request.url)
        deadline = .now + (request.timeout ?? configuration.timeout)
        maxResponseBytes = configuration.maxResponseBytes
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try configure(request, configuration)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    // MARK: Caller side

    /// Hands the transfer to the multi thread, unless it was cancelled first or the client has shut down.
    ///
    /// Queued under the outcome lock, so a `cancel` that sees `.waiting` always finds the transfer queued
    /// ahead of its own request to the thread.
    func start(_ continuation: CheckedContinuation<HTTPClientResponse, any Error>, on loop: CurlMultiThread) {
        let failure: (any Error)? = outcome.withLock { outcome in
            guard case .notStarted = outcome else { return CancellationError() }
            guard loop.add(self) else { return HTTPClientError(.shutdown, "the HTTP client was shut down") }
            outcome = .waiting(continuation)
            return nil
        }
        if let failure { continuation.resume(throwing: failure) }
    }

    /// Task cancellation: before `start`, `start` will throw; after it, the multi thread removes the handle
    /// and delivers `CancellationError`.
    func cancel(on loop: CurlMultiThread) {
        let running = outcome.withLock { outcome in
            switch outcome {
            case .notStarted:
                outcome = .cancelledEarly
                return false
            case .waiting: return true
            case .cancelledEarly, .delivered: return false
            }
        }
        if running { loop.cancel(self) }
    }

    /// Resumes the caller; later calls are ignored.
    func deliver(_ result: Result<HTTPClientResponse, any Error>) {
        let continuation = outcome.withLock { outcome -> CheckedContinuation<HTTPClientResponse, any Error>? in
            guard case .waiting(let continuation) = outcome else { return nil }
            outcome = .delivered
            return continuation
        }
        continuation?.resume(with: result)
    }

    // MARK: Multi thread

    /// Gives libcurl what is left of the total timeout, just before the handle joins the multi handle;
    /// false when nothing is left.
    func armTimeout(now: ContinuousClock.Instant) -> Bool {
        let remaining = deadline - now
        guard remaining > .zero else { return false }
        _ = storesync_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, remaining.roundedUpMilliseconds))
        return true
    }

    /// Turns libcurl's verdict into the caller's result.
    func finish(_ result: CURLcode) {
        guard result == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            return deliver(.failure(HTTPClientError(curl: result, detail: detail, bodyTooLarge: bodyTooLarge)))
        }
        var status = 0
        _ = storesync_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        deliver(.success(HTTPClientResponse(status: status, headers: headers, body: body)))
    }

    /// The transfer behind a callback's or a finished handle's context pointer (unretained: libcurl's handle
    /// lives no longer than the transfer that owns it).
    static func of(_ context: UnsafeMutableRawPointer?) -> CurlTransfer? {
        context.map { Unmanaged<CurlTransfer>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Enforces `maxResponseBytes` on the bytes actually received, whatever `Content-Length` claimed (or
    /// whether there was one): aborting here ends the transfer with a write error.
    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= maxResponseBytes else {
            bodyTooLarge = true
            return Int(CURL_WRITEFUNC_ERROR)
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// One header line per call, status lines included; a new status line (after a 1xx, or a proxy's
    /// CONNECT response) starts the header list afresh so only the final response's headers remain.
    private func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            headers.removeAll()
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].trimmingHTTPWhitespace.lowercased()
            let value = line[line.index(after: colon)...].trimmingHTTPWhitespace
            headers.append((name, value))
        }
        return bytes.count
    }

    // MARK: Options

    private func configure(_ request: HTTPClientRequest, _ configuration: HTTPClientConfiguration) throws {
        let context = Unmanaged.passUnretained(self).toOpaque()
        try set(CURLOPT_PRIVATE, pointer: context)
        try set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)
        try set(CURLOPT_URL, string: request.url)
        // HTTP(S) only: a URL that came from elsewhere must never make us read file:// or speak another protocol.
        // Redirects are not followed (libcurl's default); a 3xx is a response like any other.
        try set(CURLOPT_PROTOCOLS_STR, string: "http,https")
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = configuration.caFile { try set(CURLOPT_CAINFO, string: caFile) }
        try set(CURLOPT_CONNECTTIMEOUT_MS, max(1, configuration.connectTimeout.roundedUpMilliseconds))
        try set(CURLOPT_USERAGENT, string: configuration.userAgent)

        try check(storesync_curl_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            CurlTransfer.of(user)?.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count)) ?? 0
        }, "WRITEFUNCTION")
        try set(CURLOPT_WRITEDATA, pointer: context)
        try check(storesync_curl_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            CurlTransfer.of(user)?.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count)) ?? 0
        }, "HEADERFUNCTION")
        try set(CURLOPT_HEADERDATA, pointer: context)

        for (name, value) in request.headers {
            // Bytes, not Characters: "\r\n" is a single Character. CR/LF would inject headers, NUL truncate.
            guard !name.isEmpty, !name.utf8.contains(where: { [0, 10, 13, 58].contains($0) }),
                  !value.utf8.contains(where: { [0, 10, 13].contains($0) })
            else { throw HTTPClientError(.invalidRequest, "malformed header \(name.debugDescription)") }
            // "Name;" is libcurl's spelling of a header with an empty value ("Name:" would remove the header).
            guard let list = curl_slist_append(headerList, value.isEmpty ? "\(name);" : "\(name): \(value)") else {
                throw HTTPClientError(.other, "curl_slist_append failed")
            }
            headerList = list
        }
        if let headerList { try set(CURLOPT_HTTPHEADER, pointer: headerList) }

        try setMethod(request.method.uppercased(), body: request.body)
    }

    private func setMethod(_ method: String, body: Data?) throws {
        let body = body ?? (["POST", "PUT", "PATCH"].contains(method) ? Data() : nil)
        if let body {
            // COPYPOSTFIELDS copies the bytes, so the request's Data need not outlive this call; the size
            // must be set first for binary bodies.
            try check(storesync_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
                      "POSTFIELDSIZE")
            try body.withUnsafeBytes { bytes in
                var placeholder: UInt8 = 0  // libcurl needs a non-NULL pointer even for an empty body
                try withUnsafeMutablePointer(to: &placeholder) { fallback in
                    let start = UnsafeMutableRawPointer(mutating: bytes.baseAddress) ?? UnsafeMutableRawPointer(fallback)
                    try set(CURLOPT_COPYPOSTFIELDS, pointer: start)
                }
            }
            if method != "POST" { try set(CURLOPT_CUSTOMREQUEST, string: method) }
        } else if method == "HEAD" {
            try set(CURLOPT_NOBODY, 1)
        } else if method != "GET" {
            try set(CURLOPT_CUSTOMREQUEST, string: method)
        }
    }

    private static func host(of url: String) -> String {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
              let host = parsed.host?.lowercased()
        else { return url }  // libcurl will reject it
        return "\(scheme)://\(host):\(parsed.port ?? (scheme == "https" ? 443 : 80))"
    }

    private func set(_ option: CURLoption, _ value: Int) throws {
        try check(storesync_curl_easy_setopt_long(easy, option, value), "\(option.rawValue)")
    }

    /// libcurl copies string options (since 7.17), so the temporary C string suffices.
    private func set(_ option: CURLoption, string: String) throws {
        let code = string.withCString {
            storesync_curl_easy_setopt_pointer(easy, option, UnsafeMutableRawPointer(mutating: $0))
        }
        try check(code, "\(option.rawValue)")
    }

    private func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer) throws {
        try check(storesync_curl_easy_setopt_pointer(easy, option, pointer), "\(option.rawValue)")
    }

    private func check(_ code: CURLcode, _ option: String) throws {
        guard code == CURLE_OK else {
            throw HTTPClientError(.invalidRequest, "option \(option): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}
