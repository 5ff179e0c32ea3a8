import CLI
import Foundation
import Synchronization

/// The stores' side of `bench pipeline` in a process of its own (`storesync-dev bench pipeline-store`): the
/// simulator, and the scenario calls that make it notify. Its CPU is the store's and the load generator's, which
/// a production host never pays; with it out of StoreSync's process, StoreSync's CPU per notification is what
/// `getrusage` says of the benchmark process.
///
/// The two talk in JSON lines: the child prints its `PipelineStoreSettings`; the parent answers with a `Go`
/// (latency, plan, account tokens) once it has seeded the database; the child sends every notification and
/// prints a `Sent`; a `counts` line asks for the store calls answered so far; end of input stops the child.
final class PipelineStoreProcess: Sendable {
    struct Go: Codable {
        let latencyMilliseconds: Int
        let notifications: Int
        let subscriptions: Int
        let senders: Int
        let rate: Int?
        /// One per subscription.
        let tokens: [UUID]
    }

    /// What the child saw of ingest's answers: `SentNotifications` with wall-clock times, which mean the same in
    /// both processes.
    struct Sent: Codable {
        let accepted: Int
        let refused: Int
        let firstError: String?
        let messageIDs: [String]
        let sendingSeconds: Double
        let firstAccepted: Date?
    }

    let settings: PipelineStoreSettings
    let pid: Int32
    private let process: Process
    private let input: FileHandle
    private let output: Lines

    /// Starts the child for `store`, posting to `webhookURL` with `host` as the `Host` header, and reads its settings.
    static func start(_ store: any PipelineBenchStore.Type, webhookURL: String, host: String) async throws -> PipelineStoreProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["bench", "pipeline-store", "--store", store.name, "--webhook-url", webhookURL, "--host", host]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start the stores' process: \(error)")
        }
        let input = stdin.fileHandleForWriting, output = Lines(stdout.fileHandleForReading)
        do {
            return PipelineStoreProcess(process: process, input: input, output: output,
                                        settings: try await read(PipelineStoreSettings.self, from: output))
        } catch {
            await stop(process, input: input)
            throw error
        }
    }

    private init(process: Process, input: FileHandle, output: Lines, settings: PipelineStoreSettings) {
        self.process = process
        pid = process.processIdentifier
        self.input = input
        self.output = output
        self.settings = settings
    }

    /// Has the child send every notification of the plan; returns once it has.
    func send(_ go: Go) async throws -> Sent {
        try write(go)
        return try await Self.read(Sent.self, from: output)
    }

    /// API requests the simulator answered so far, by endpoint.
    func requestCounts() async throws -> [String: Int] {
        input.write(Data("counts\n".utf8))
        return try await Self.read([String: Int].self, from: output)
    }

    /// CPU time the child has used so far.
    func cpu() -> Duration { CPUTime.of(pid) ?? .zero }

    /// Ends the child's input and waits for it to exit.
    func stop() async { await Self.stop(process, input: input) }

    private static func stop(_ process: Process, input: FileHandle) async {
        try? input.close()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                process.waitUntilExit()
                done.resume()
            }.start()
        }
    }

    private func write(_ value: some Encodable) throws {
        input.write(try JSONEncoder().encode(value) + Data("\n".utf8))
    }

    private static func read<T: Decodable>(_ type: T.Type, from output: Lines) async throws -> T {
        guard let line = await output.next() else { throw BenchError("the stores' process exited early (its errors are above)") }
        do {
            return try JSONDecoder().decode(type, from: Data(line.utf8))
        } catch {
            throw BenchError("the stores' process printed \(line.prefix(200).debugDescription), not a \(type): \(error)")
        }
    }

    // MARK: The child

    /// `storesync-dev bench pipeline-store`: runs until its input ends.
    static func serve(_ arguments: inout Arguments) async throws -> Int32 {
        let names = PipelineBenchmark.stores.map { $0.name }
        guard let name = try arguments.option("--store"), let type = PipelineBenchmark.stores.first(where: { $0.name == name }) else {
            throw UsageError("--store \(names.joined(separator: "|")) is required")
        }
        guard let webhookURL = try arguments.option("--webhook-url"), let host = try arguments.option("--host") else {
            throw UsageError("--webhook-url URL and --host H are required")
        }
        try arguments.finish()
        let store = try await type.start(webhookURL: webhookURL, host: host)
        let commands = Lines(FileHandle.standardInput)
        do {
            try printLine(try store.settings())
            while let line = await commands.next() {
                if line == "counts" {
                    try printLine(store.requestCounts)
                    continue
                }
                let go = try JSONDecoder().decode(Go.self, from: Data(line.utf8))
                try store.setLatency(.milliseconds(go.latencyMilliseconds))
                try printLine(await PipelineSender.send(store, go: go))
            }
        } catch {
            await store.stop()
            throw error
        }
        await store.stop()
        return 0
    }

    private static func printLine(_ value: some Encodable) throws {
        FileHandle.standardOutput.write(try JSONEncoder().encode(value) + Data("\n".utf8))
    }
}

/// The lines of a pipe, read on a thread of their own: a blocking read must not hold one of the pool's. One
/// reader at a time.
final class Lines: Sendable {
    private struct State {
        var lines: [String] = []
        var ended = false
        var waiter: CheckedContinuation<String?, Never>?
    }

    private let state = Mutex(State())

    init(_ handle: FileHandle) {
        Thread { self.read(handle) }.start()
    }

    private func read(_ handle: FileHandle) {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            guard !chunk.isEmpty else { break }
            pending += chunk
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[pending.index(after: newline)...])
                let waiter = state.withLock { state in
                    guard let waiter = state.waiter else {
                        state.lines.append(line)
                        return nil as CheckedContinuation<String?, Never>?
                    }
                    state.waiter = nil
                    return waiter
                }
                waiter?.resume(returning: line)
            }
        }
        let waiter = state.withLock { state in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next line, nil at the end of the input.
    func next() async -> String? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> String?? in
                if !state.lines.isEmpty { return .some(state.lines.removeFirst()) }
                if state.ended { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
