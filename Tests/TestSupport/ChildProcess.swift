import CStoreSyncShims
import Foundation

/// A process started by a test with `posix_spawn` (`storesync`, the test worker, PostgreSQL's tools, Chromium),
/// its output collected as it arrives.
///
/// Not `Foundation.Process`: on Linux its `run()` crashes now and then (a 256-byte over-read of `struct
/// dirent` while it lists /proc/self/fd — swift-corelibs-foundation PR #5472), which a suite that starts
/// hundreds of processes hits.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let name: String
    private let ownsGroup: Bool
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

    /// Any program, by its absolute path (PostgreSQL's tools for a private cluster, Chromium).
    ///
    /// `descriptors` hands the child more of our descriptors, keyed by the number the child finds each under
    /// (Chromium's DevTools pipe is its fds 3 and 4); the caller still owns and closes its own copies.
    /// `ownProcessGroup` starts the child in a process group of its own, so that `signalGroup` also reaches the
    /// helper processes it starts (Chromium's renderers and zygotes).
    public init(path: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil,
                descriptors: [Int32: Int32] = [:], ownProcessGroup: Bool = false) throws {
        name = URL(fileURLWithPath: path).lastPathComponent
        ownsGroup = ownProcessGroup
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        let handedOver = try Self.numberedAboveTargets(descriptors)
        defer { handedOver.copies.forEach { close($0) } }
        let stdinPipe = try Self.pipe(), stdoutPipe = try Self.pipe(), stderrPipe = try Self.pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The pipes are close-on-exec; dup2 gives the child its ends as 0, 1 and 2 without that flag.
        posix_spawn_file_actions_adddup2(&actions, stdinPipe.read, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe.write, 2)
        for (target, source) in handedOver.mapping { posix_spawn_file_actions_adddup2(&actions, source, target) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if ownProcessGroup {
            // Process group 0: a new group whose id is the child's pid, set before exec so no helper escapes it.
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
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

    /// A close-on-exec pipe: no concurrently spawned process inherits it unless handed it explicitly.
    static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard storesync_pipe_cloexec(&fds) == 0 else { throw TestSetupError("pipe2 failed: \(String(cString: strerror(errno)))") }
        return (fds[0], fds[1])
    }

    /// `descriptors` as (child's number, ours) in the order the dup2s run. The dup2s run one after another in
    /// the child, so one of ours that bears the number of an earlier target would already be overwritten when
    /// its turn comes: such ones are handed over as close-on-exec copies numbered above every target, which
    /// the caller closes after the spawn. (Our 0, 1 and 2 would be overwritten by the child's standard streams.)
    private static func numberedAboveTargets(_ descriptors: [Int32: Int32]) throws
        -> (mapping: [(target: Int32, source: Int32)], copies: [Int32])
    {
        let floor = (descriptors.keys.max() ?? 0) + 1
        var mapping: [(target: Int32, source: Int32)] = []
        var copies: [Int32] = []
        for (target, source) in descriptors.sorted(by: { $0.key < $1.key }) {
            if descriptors[source] == nil, source > 2 {
                mapping.append((target, source))
                continue
            }
            let copy = fcntl(source, F_DUPFD_CLOEXEC, floor)
            guard copy >= 0 else {
                copies.forEach { close($0) }
                throw TestSetupError("cannot renumber descriptor \(source): \(String(cString: strerror(errno)))")
            }
            copies.append(copy)
            mapping.append((target, copy))
        }
        return (mapping, copies)
    }

    public var stdout: String { output.stdout }
    public var stderr: String { output.stderr }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// Signals every process in the child's group (it and the helpers it started) when it was started with
    /// `ownProcessGroup`, the child alone otherwise. Call it before `wait` reaps the child: until then its pid,
    /// which names the group, cannot be reused.
    public func signalGroup(_ number: Int32) { kill(ownsGroup ? -pid : pid, number) }

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
