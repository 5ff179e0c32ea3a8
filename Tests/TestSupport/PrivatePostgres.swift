import Foundation
import Migrations
import Postgres

/// A PostgreSQL cluster of one test's own, for tests that stop and restart the server: the shared server
/// every other test uses must never go down. It listens only on a Unix socket in its own temporary directory
/// (no port at all), skips fsync (a crash here is a stopped server, never a lost page cache, so nothing
/// committed is lost), and is removed by `destroy()`. When the tests run as root, as CI does, the
/// cluster belongs to the `storesync` system user `deploy/dev.sh` creates, since PostgreSQL refuses to run as
/// root.
public final class PrivatePostgres: Sendable {
    public let directory: String
    private let bin: String
    private let owner: String?

    /// `postgres` superuser over the socket, database `postgres`; trust authentication.
    public var url: String { "host=\(directory) dbname=postgres user=postgres" }

    private init(directory: String, bin: String, owner: String?) {
        self.directory = directory
        self.bin = bin
        self.owner = owner
    }

    /// A new, started cluster with StoreSync's schema migrated into its `postgres` database.
    public static func start() async throws -> PrivatePostgres {
        let versions = try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")
            .compactMap(Int.init).sorted()
        guard let version = versions.last else { throw TestSetupError("no PostgreSQL server under /usr/lib/postgresql") }
        var template = Array("/tmp/storesync-pg-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw TestSetupError("mkdtemp failed: \(errno)") }
        let directory = String(cString: created)
        let owner = getuid() == 0 ? "storesync" : nil
        if let owner {
            guard let account = getpwnam(owner) else {
                throw TestSetupError("tests run as root need the \(owner) system user; run them with `deploy/dev.sh test`")
            }
            chown(directory, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        let cluster = PrivatePostgres(directory: directory, bin: "/usr/lib/postgresql/\(version)/bin", owner: owner)
        try await cluster.tool("initdb", ["-D", cluster.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                                          "--locale=C.UTF-8", "--no-sync"])
        let settings = """
            listen_addresses = ''
            unix_socket_directories = '\(directory)'
            fsync = off
            max_connections = 60
            """
        try await cluster.asOwner("/bin/sh", ["-c", "cat >> '\(cluster.data)/postgresql.conf'"], stdin: Data(settings.utf8))
        try await cluster.startServer()
        let pool = PostgresPool(PostgresConfiguration(url: cluster.url, poolSize: 1))
        defer { Task { await pool.close() } }
        try await pool.withConnection { connection in _ = try await Migrator().migrate(connection) }
        return cluster
    }

    /// Starts the server and returns once it accepts connections.
    public func startServer() async throws {
        try await tool("pg_ctl", ["-D", data, "-l", "\(directory)/server.log", "-w", "-t", "60", "start"])
    }

    /// Stops the server as a crash would: every backend killed at once, no checkpoint.
    public func crash() async throws {
        try await tool("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "60", "stop"])
    }

    /// Stops the server and removes the cluster.
    public func destroy() async {
        _ = try? await tool("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "60", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    private var data: String { "\(directory)/data" }

    private func tool(_ name: String, _ arguments: [String]) async throws {
        try await asOwner("\(bin)/\(name)", arguments)
    }

    private func asOwner(_ path: String, _ arguments: [String], stdin: Data? = nil) async throws {
        // From `/`: the owner may not be allowed into the test's working directory, and initdb needs it.
        let inRoot = ["-c", #"cd / && exec "$0" "$@""#, path] + arguments
        let argv = owner.map { ["-u", $0, "--", "/bin/sh"] + inRoot } ?? inRoot
        let child = try ChildProcess(path: owner == nil ? "/bin/sh" : "/usr/sbin/runuser", argv, stdin: stdin)
        let status = try await child.wait(timeout: .seconds(90))
        guard status == 0 else {
            throw TestSetupError("\(path) \(arguments.joined(separator: " ")) exited \(status): \(child.stderr.suffix(2000))")
        }
    }
}
