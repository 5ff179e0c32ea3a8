import Foundation

/// A `storesync` (or test worker) process started by a test, with its output captured.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let output = OutputBuffer()

    /// The binaries `deploy/dev.sh test` built: `storesync` and `storesync-testworker`, found through
    /// STORESYNC_BIN / STORESYNC_TESTWORKER_BIN or next to the test bundle.
    public static func binary(_ name: String) throws -> URL {
        let variable = name == "storesync" ? "STORESYNC_BIN" : "STORESYNC_TESTWORKER_BIN"
        if let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw TestSetupError("cannot find the \(name) binary: set \(variable) or run `deploy/dev.sh test`")
    }

    public init(_ binary: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) throws {
        process.executableURL = try Self.binary(binary)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        let inputPipe = Pipe()
        process.standardInput = inputPipe
        let output = output
        stdoutPipe.fileHandleForReading.readabilityHandler = { output.append(stdout: $0.availableData) }
        stderrPipe.fileHandleForReading.readabilityHandler = { output.append(stderr: $0.availableData) }
        try process.run()
        if let stdin { inputPipe.fileHandleForWriting.write(stdin) }
        try inputPipe.fileHandleForWriting.close()
    }

    public var stdout: String { output.stdout }
    public var stderr: String { output.stderr }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to exit (bounded) and returns its status.
    public func wait(timeout: Duration = .seconds(60)) async throws -> Int32 {
        try await eventually("\(process.executableURL?.lastPathComponent ?? "process") to exit; stderr: \(stderr.suffix(2000))",
                             timeout: timeout) { !process.isRunning }
        // Let the pipes deliver what is left.
        stdoutPipe.fileHandleForReading.readabilityHandler = nil
        stderrPipe.fileHandleForReading.readabilityHandler = nil
        output.append(stdout: stdoutPipe.fileHandleForReading.readDataToEndOfFile())
        output.append(stderr: stderrPipe.fileHandleForReading.readDataToEndOfFile())
        return process.terminationStatus
    }

    /// Runs a command to completion and returns (status, stdout, stderr).
    public static func run(_ binary: String, _ arguments: [String], environment: [String: String] = [:],
                           stdin: Data? = nil, timeout: Duration = .seconds(60)) async throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        let child = try ChildProcess(binary, arguments, environment: environment, stdin: stdin)
        let status = try await child.wait(timeout: timeout)
        return (status, child.stdout, child.stderr)
    }
}

private final class OutputBuffer: @unchecked Sendable {
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    func append(stdout data: Data) { lock.withLock { out.append(data) } }
    func append(stderr data: Data) { lock.withLock { err.append(data) } }
    var stdout: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: err, as: UTF8.self) } }
}
