import Console
import Foundation
import GooglePlay
import HTTP
import Logging
import Postgres
import Systemd

struct ConsoleCommand: Command {
    static let name = "console"
    static let summary = "serve the on-call console: dead letters, purchases' stories and queue health in a browser"
    static let usage = """
        usage: storesync console [--listen HOST:PORT] [--credentials FILE]
               storesync console add-operator NAME --credentials FILE

        Serves the on-call console: the queue's health with charts of the last 24 hours, dead letters (filter, read
        whole with the notification decoded and verified again, retry or discard one, the ticked ones or all a filter
        shows — every action recorded with who did it, also on the purchase's timeline), and any purchase's story
        (search by lineage, transaction or order id, purchase token, customer id or account token). Pages are plain
        HTML from this process; nothing is loaded from elsewhere.

        It listens on loopback by default: reach it through an SSH tunnel (ssh -L 8090:127.0.0.1:8090 HOST, then
        http://127.0.0.1:8090/). Listening on any other address requires a credentials file (HTTP Basic); without
        one it refuses to start. Its database login needs only the storesync_console role's grants.

          --listen HOST:PORT   env STORESYNC_CONSOLE_LISTEN        default 127.0.0.1:8090 (port 0 picks a free port)
          --credentials FILE   env STORESYNC_CONSOLE_CREDENTIALS   operators' hashed passwords, one per line
          env STORESYNC_CONSOLE_DATABASE_URL   its database login (a member of storesync_console); default DATABASE_URL
          env STORESYNC_CONSOLE_OPERATOR       the name actions are recorded under without credentials (default
                                               local:$USER)

        add-operator reads NAME's password from standard input (its first line, 8 to 1024 bytes) and writes NAME's
        line to FILE (created with mode 0600; a line for NAME already there is replaced). The password itself is
        never written: only a PBKDF2-HMAC-SHA-256 hash with a random salt.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        if arguments.subcommand("add-operator") { return try addOperator(&arguments) }
        let listen = try Listen(try arguments.option("--listen") ?? environment.string("STORESYNC_CONSOLE_LISTEN")
                                    ?? "127.0.0.1:8090", "--listen")
        let credentialsPath = try arguments.option("--credentials") ?? environment.string("STORESYNC_CONSOLE_CREDENTIALS")
        try arguments.finish()
        let credentials: OperatorCredentials?
        do {
            credentials = try credentialsPath.map { path throws(ConsoleError) in try OperatorCredentials(contentsOf: path) }
        } catch {
            throw UsageError(error.message)
        }
        guard credentials != nil || Self.isLoopback(listen.host) else {
            throw UsageError("the console listens on \(listen.host), beyond loopback, only with --credentials FILE "
                             + "(storesync console add-operator NAME --credentials FILE makes one)")
        }
        let url = try environment.databaseURL("STORESYNC_CONSOLE_DATABASE_URL") ?? environment.databaseURL()
        var postgres = PostgresConfiguration(url: url, poolSize: try environment.int("STORESYNC_DB_POOL_SIZE", range: 1...50) ?? 4,
                                             applicationName: "storesync-console")
        postgres.statementTimeout = .seconds(10)
        let pool = PostgresPool(postgres)
        let localOperator = environment.string("STORESYNC_CONSOLE_OPERATOR")
            ?? "local:\(environment.string("USER") ?? environment.string("LOGNAME") ?? "operator")"
        // What operator_actions keeps: refused now rather than at every action's commit.
        guard (1...200).contains(localOperator.utf8.count),
              !localOperator.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw UsageError("STORESYNC_CONSOLE_OPERATOR must be 1 to 200 bytes without control characters")
        }
        let logger = Logger(component: "console")
        let keysHTTP = try HTTPClient()
        let console = Console(configuration: Console.Configuration(credentials: credentials, localOperator: localOperator),
                              pool: pool, keyCaches: GoogleKeyCaches(http: keysHTTP), logger: logger)
        var configuration = listen.serverConfiguration
        configuration.maxBodyBytes = 256 * 1024
        let server = try HTTPServer(configuration: configuration, router: console.router)
        logger.info("listening", ["host": .string(listen.host), "port": .int(Int(server.port)),
                                  "operators": .int(credentials?.operatorNames.count ?? 0)])
        let outcome = await runUntilTerminated(startup: {
            try await DatabaseStartup.waitUntilReady(pool, logger: logger)
            await console.warm()
        }, ready: { ServiceNotifier.ready() })
        ServiceNotifier.stopping()
        await server.stop(grace: .seconds(5))
        await keysHTTP.shutdown()
        await pool.close()
        try outcome.get()
        logger.info("stopped")
        return 0
    }

    /// Writes `text` to a new file beside `path`, created empty with mode 0600 before anything is written to it, then
    /// puts it in `path`'s place: the hashes are never in a file others may read, and a crash leaves the old file or
    /// the new one (`.NAME.UUID` beside it) whole.
    private static func writePrivately(_ text: String, to path: String) throws {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw UsageError("cannot create a file beside \(path)")
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.write(contentsOf: Data(text.utf8))
            try handle.synchronize()
            try handle.close()
            // Foundation on Linux moves onto no existing file and replaces none: the old one goes first.
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(at: target) }
            try FileManager.default.moveItem(at: temporary, to: target)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw UsageError("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Loopback addresses and the name for them: what an SSH tunnel reaches and nothing else does.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || (host.hasPrefix("127.") && host.split(separator: ".").count == 4)
    }

    private static func addOperator(_ arguments: inout Arguments) throws -> Int32 {
        guard let name = arguments.positional() else { throw UsageError("add-operator needs a NAME") }
        guard let path = try arguments.option("--credentials") else { throw UsageError("add-operator needs --credentials FILE") }
        try arguments.finish()
        let input = try FileHandle.standardInput.read(upToCount: 4096) ?? Data()
        // The first line, whatever ends it (CRLF is one Character in Swift).
        let password = String(decoding: input, as: UTF8.self).split(maxSplits: 1, omittingEmptySubsequences: false,
                                                                     whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let line: String
        do {
            line = try OperatorCredentials.line(name: name, password: password)
        } catch {
            throw UsageError(error.message)
        }
        var existing: [String] = []
        if FileManager.default.fileExists(atPath: path) {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw UsageError("cannot read \(path) as UTF-8 text; not overwriting it, which would lose its operators")
            }
            existing = text.split(whereSeparator: \.isNewline).map(String.init)
        }
        let kept = existing.filter { !$0.hasPrefix(name + ":") }
        try writePrivately((kept + [line]).joined(separator: "\n") + "\n", to: path)
        Output.print("\(kept.count == existing.count ? "added" : "replaced") operator \(name) in \(path)")
        return 0
    }
}
