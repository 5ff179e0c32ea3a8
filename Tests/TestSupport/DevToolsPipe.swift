import Foundation

/// What Chromium answered a command with instead of a result, or why it never will.
public struct DevToolsError: Error, CustomStringConvertible {
    public let description: String
}

/// Receives the events of one DevTools session (one page), on the pipe's reader thread: it must be quick and
/// never block.
protocol DevToolsSessionListener: AnyObject, Sendable {
    func received(_ method: String, _ params: JSONValue)
    /// The pipe closed (Chromium exited or was killed): nothing more will come.
    func ended(_ reason: String)
}

/// The Chrome DevTools Protocol over `--remote-debugging-pipe`: JSON messages, each ended by a NUL byte, that we
/// write to Chromium's fd 3 and read from its fd 4 — no port, no WebSocket.
///
/// Each command gets an id and awaits the answer carrying it, within a bound, so a browser that stops answering
/// fails the test with the command's name. A reader thread of its own splits fd 4 into messages, hands answers
/// to their commands and events to the session they name (`sessionId`: pages are attached with
/// `flatten: true`, so every page shares this one pipe). (NSLock rather than `Mutex`, which ThreadSanitizer
/// cannot see through on Linux.)
final class DevToolsPipe: @unchecked Sendable {
    private let writer: PipeWriter
    private let lock = NSLock()
    private var lastID = 0
    private var pending: [Int: (method: String, answer: Delivery<JSONValue>)] = [:]
    private var listeners: [String: any DevToolsSessionListener] = [:]
    /// Why the pipe is closed, once it is.
    private var endReason: String?

    /// Takes both descriptors over: `commands` is ours of the pipe Chromium reads as fd 3, `events` ours of
    /// the one it writes as fd 4.
    init(commands: Int32, events: Int32) {
        writer = PipeWriter(fd: commands, name: "chromium-devtools-writer")
        let thread = Thread { [self] in
            readMessages(from: events)
            Glibc.close(events)
        }
        thread.name = "chromium-devtools-reader"
        thread.start()
    }

    /// Sends `method` and returns its result, or throws Chromium's error or `TimedOut` naming the command.
    @discardableResult
    func send(_ method: String, _ params: JSONValue = [:], session: String? = nil,
              timeout: Duration) async throws -> JSONValue {
        let answer = Delivery<JSONValue>()
        let id: Int = try lock.withLock {
            if let endReason { throw DevToolsError(description: "cannot send \(method): \(endReason)") }
            lastID += 1
            pending[lastID] = (method, answer)
            return lastID
        }
        var message: [String: JSONValue] = ["id": .number(Double(id)), "method": .string(method), "params": params]
        if let session { message["sessionId"] = .string(session) }
        do {
            writer.write(try JSONValue.object(message).serialized() + [0])
            return try await answer.value(within: timeout, "Chromium's answer to \(method)")
        } catch {
            lock.withLock { pending[id] = nil }
            throw error
        }
    }

    /// Routes `session`'s events to `listener` from now on; a closed pipe tells it at once.
    func listen(to session: String, _ listener: any DevToolsSessionListener) {
        let reason: String? = lock.withLock {
            if endReason == nil { listeners[session] = listener }
            return endReason
        }
        if let reason { listener.ended(reason) }
    }

    func stopListening(to session: String) {
        lock.withLock { listeners[session] = nil }
    }

    /// Closes our end of the command pipe: Chromium reads end of file and exits (or is killed first).
    func close() {
        writer.close()
    }

    private func readMessages(from fd: Int32) {
        var message: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                return end(count == 0 ? "Chromium closed its DevTools pipe (it exited)"
                                      : "reading Chromium's DevTools pipe failed: \(String(cString: strerror(errno)))")
            }
            var start = 0
            while let terminator = chunk[start..<count].firstIndex(of: 0) {
                message.append(contentsOf: chunk[start..<terminator])
                dispatch(Data(message))
                message.removeAll(keepingCapacity: true)
                start = terminator + 1
            }
            message.append(contentsOf: chunk[start..<count])
        }
    }

    private func dispatch(_ data: Data) {
        guard let message = try? JSONValue(parsing: data) else {
            return end("Chromium sent a message that is not JSON: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        if let id = message["id"]?.int {
            guard let command = lock.withLock({ pending.removeValue(forKey: id) }) else { return }
            if let error = message["error"] {
                let text = [error["message"]?.string, error["data"]?.string].compactMap { $0 }.joined(separator: ": ")
                command.answer.deliver(.failure(DevToolsError(description: "\(command.method) failed: \(text)")))
            } else {
                command.answer.deliver(.success(message["result"] ?? [:]))
            }
        } else if let method = message["method"]?.string, let session = message["sessionId"]?.string {
            // Browser-level events (no session) are never subscribed to.
            lock.withLock { listeners[session] }?.received(method, message["params"] ?? [:])
        }
    }

    /// Fails every command still waiting and tells every session; later sends fail at once.
    private func end(_ reason: String) {
        let (waiting, told): ([(method: String, answer: Delivery<JSONValue>)], [any DevToolsSessionListener]) = lock.withLock {
            guard endReason == nil else { return ([], []) }
            endReason = reason
            defer {
                pending = [:]
                listeners = [:]
            }
            return (Array(pending.values), Array(listeners.values))
        }
        for command in waiting {
            command.answer.deliver(.failure(DevToolsError(description: "no answer to \(command.method): \(reason)")))
        }
        for listener in told { listener.ended(reason) }
    }
}
