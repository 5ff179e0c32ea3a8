import CStoreSyncShims
import Foundation

/// A `storesync` (or test worker) process started by a test with `posix_spawn`, its output collected as it
/// arrives.
///
/// Not `Foundation.Process`: on Linux its `run()` crashes now and then (a 256-byte over-read of `struct
/// dirent` while it lists /proc/self/fd — swift-corelibs-foundation PR #5472), which a suite that starts
/// hundreds of processes hits.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let name: String
    private let output = OutputBuffer()
    private let exit = NSLock()
    private var exitStatus: Int32?

    /// The binaries `deploy/dev.sh test` built: `storesync`, `storesync-dev` and `storesync-testworker`, found
    /// through STORESYNC_BIN / STORESYNC_DEV_BIN / STORESYNC_TESTWORKER_BIN or next to the test bundle.
    public static func binary(_ name: String) throws -> URL {
        let variable = switch name {
        case "storesync": "STORESYNC_BIN"
        case "storesync-dev": "STORESYNC_DEV_BIN"
        default: "STORESYNC_TESTWORKER_BIN"
        }
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

    public convenience init(_ binary: String, _ arguments: [String], environment: [String: String] = [:],
                            stdin: Data? = nil) throws {
        try self.init(path: try Self.binary(binary).path, arguments, environment: environment, stdin: stdin)
    }

    /// Any program, by its absolute path (PostgreSQL's tools for a private cluster).
    public init(path: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) throws {
        name = URL(fileURLWithPath: path).lastPathComponent
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        let stdinPipe = try Self.pipe(), stdoutPipe = try Self.pipe(), stderrPipe = try Self.pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The pipes are close-on-exec; dup2 gives the child its ends as 0, 1 and 2 without that flag.
        posix_spawn_file_actions_adddup2(&actions, stdinPipe.read, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe.write, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        for fd in [stdinPipe.read, stdoutPipe.write, stderrPipe.write] { close(fd) }
        guard spawned == 0 else {
            for fd in [stdinPipe.write, stdoutPipe.read, stderrPipe.read] { close(fd) }
            throw TestSetupError("cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        // A blocking reader thread per pipe, not FileHandle.readabilityHandler: libdispatch's event loop on
        // Linux can crash when many such sources come and go while their descriptors are closed.
        let output = output
        Self.drain(stdoutPipe.read, into: { output.append(stdout: $0) }, then: { output.pipeClosed() })
        Self.drain(stderrPipe.read, into: { output.append(stderr: $0) }, then: { output.pipeClosed() })
        let input = FileHandle(fileDescriptor: stdinPipe.write, closeOnDealloc: true)
        if let stdin { input.write(stdin) }
        try input.close()
    }

    private static func drain(_ fd: Int32, into append: @escaping @Sendable (Data) -> Void,
                              then done: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    append(Data(buffer[0..<count]))
                } else if count == 0 || errno != EINTR {
                    break
                }
            }
            close(fd)
            done()
        }
        thread.start()
    }

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard storesync_pipe_cloexec(&fds) == 0 else { throw TestSetupError("pipe2 failed: \(String(cString: strerror(errno)))") }
        return (fds[0], fds[1])
    }

    public var stdout: String { output.stdout }
    public var stderr: String { output.stderr }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// Whether the process still runs; reaps it once it has exited.
    public var isRunning: Bool {
        exit.withLock {
            guard exitStatus == nil else { return false }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return true }
            // Like Foundation: the exit code, or the number of the signal that ended it.
            let signal = status & 0x7f
            exitStatus = signal == 0 ? (status >> 8) & 0xff : signal
            return false
        }
    }

    /// Waits for the process to exit (bounded) and returns its exit code (or the signal that ended it).
    public func wait(timeout: Duration = .seconds(60)) async throws -> Int32 {
        try await eventually("\(name) to exit; stderr: \(stderr.suffix(2000))", timeout: timeout) { !isRunning }
        // Let the pipes deliver what is left: both readers stop at end of file.
        try await eventually("\(name)'s output pipes to close", timeout: .seconds(10)) { output.closedPipes == 2 }
        return exit.withLock { exitStatus ?? -1 }
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

    private var closed = 0

    func append(stdout data: Data) { lock.withLock { out.append(data) } }
    func pipeClosed() { lock.withLock { closed += 1 } }
    var closedPipes: Int { lock.withLock { closed } }
    func append(stderr data: Data) { lock.withLock { err.append(data) } }
    var stdout: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: err, as: UTF8.self) } }
}
