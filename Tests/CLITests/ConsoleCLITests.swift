import Console
import Foundation
import HTTP
import TestSupport
import Testing

/// `storesync console` as an operator runs it: it refuses to listen beyond loopback without credentials and to
/// start on a malformed credentials file, `add-operator` writes a private file the console reads, and it serves
/// on loopback until SIGTERM.
@Suite struct ConsoleCLITests {
    @Test func beyondLoopbackWithoutCredentialsItRefusesToStart() async throws {
        let result = try await ChildProcess.run("storesync", ["console", "--listen", "0.0.0.0:0"],
                                                environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("the console listens on 0.0.0.0, beyond loopback, only with --credentials FILE"),
                "stderr was: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "stderr was: \(result.stderr)")
    }

    @Test(arguments: [("# operators\nalice:pbkdf2-sha256$1000$AAAA$AAAA\n", "line 2: the hash is not"),
                      ("alice\n", "line 1 is not NAME:"), ("", "names no operator")])
    func aMalformedCredentialsFileIsRefusedNamingTheLine(text: String, message: String) async throws {
        let path = try Self.temporaryFile(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await ChildProcess.run("storesync", ["console", "--listen", "0.0.0.0:0", "--credentials", path],
                                                environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(path) \(message)"), "stderr was: \(result.stderr)")
    }

    /// The password goes in on standard input and only its hash comes out, in a file only its owner reads; adding
    /// the same operator again replaces their line and keeps the others'.
    @Test func addOperatorWritesAPrivateFileTheConsoleReads() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("console-operators-\(UUID()).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let add = { (name: String, password: String) in
            try await ChildProcess.run("storesync", ["console", "add-operator", name, "--credentials", path],
                                       stdin: Data("\(password)\n".utf8))
        }
        let first = try await add("alice", "first password")
        #expect(first.status == 0, "stderr was: \(first.stderr)")
        #expect(first.stdout == "added operator alice in \(path)\n")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try OperatorCredentials(contentsOf: path).operatorNames == ["alice"])

        #expect(try await add("bob", "bob's password").status == 0)
        let again = try await add("alice", "second password")
        #expect(again.status == 0, "stderr was: \(again.stderr)")
        #expect(again.stdout == "replaced operator alice in \(path)\n")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.split(separator: "\n").map { $0.prefix { $0 != ":" } } == ["bob", "alice"])
        #expect(!text.contains("password"))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try OperatorCredentials(contentsOf: path).operatorNames == ["alice", "bob"])

        // The console started on the file takes alice's new password, not her old one.
        try await TestDatabase.with { database in
            try await Self.withConsole(["--credentials", path], database: database) { port, client in
                let get = { (password: String) async throws -> Int in
                    let basic = Data("alice:\(password)".utf8).base64EncodedString()
                    return try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/",
                                                                   headers: [("Authorization", "Basic \(basic)")])).status
                }
                let (new, old) = (try await get("second password"), try await get("first password"))
                #expect(new == 200)
                #expect(old == 401)
            }
        }

        let short = try await add("carol", "short")
        #expect(short.status == 2)
        #expect(short.stderr.contains("a password is 8 to 1024 bytes"), "stderr was: \(short.stderr)")
    }

    /// A file it cannot read is left as it is rather than replaced by one holding only the new operator.
    @Test func addOperatorLeavesAFileItCannotReadAlone() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("console-operators-\(UUID()).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let unreadable = Data([0x61, 0x6C, 0xFF, 0xFE, 0x0A])
        #expect(FileManager.default.createFile(atPath: path, contents: unreadable))
        let added = try await ChildProcess.run("storesync", ["console", "add-operator", "alice", "--credentials", path],
                                               stdin: Data("a good password\n".utf8))
        #expect(added.status == 2)
        #expect(added.stderr.contains("not overwriting it"), "stderr was: \(added.stderr)")
        #expect(FileManager.default.contents(atPath: path) == unreadable)
    }

    @Test func onLoopbackItServesUntilSIGTERM() async throws {
        try await TestDatabase.with { database in
            try await Self.withConsole([], database: database) { port, client in
                let page = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/"))
                #expect(page.status == 200)
                let text = String(decoding: page.body, as: UTF8.self)
                #expect(text.contains("<title>Queue · StoreSync</title>"))
                #expect(text.contains(#"<span class="who">local:cli</span>"#))
            }
        }
    }

    /// Runs `storesync console --listen 127.0.0.1:0` with `arguments` as a member of `storesync_console`, hands
    /// `body` its port once it listens, then stops it with SIGTERM and expects a clean exit.
    static func withConsole(_ arguments: [String], database: TestDatabase,
                            _ body: (Int, HTTPClient) async throws -> Void) async throws {
        let role = try await TestRole.create(memberOf: "storesync_console", for: database)
        let console = try ChildProcess("storesync", ["console", "--listen", "127.0.0.1:0"] + arguments,
                                       environment: ["DATABASE_URL": role.url, "STORESYNC_CONSOLE_OPERATOR": "local:cli"])
        let client = try HTTPClient()
        do {
            var port: Int?
            try await eventually("the console to log the port it listens on; stderr: \(console.stderr.suffix(1500))") {
                port = try StartupWaitTests.loggedPort(console, message: "listening")
                return port != nil || !console.isRunning
            }
            try await body(try #require(port, "the console exited: \(console.stderr.suffix(1500))"), client)
            console.signal(SIGTERM)
            #expect(try await console.wait(timeout: .seconds(30)) == 0, "stderr: \(console.stderr.suffix(1500))")
            #expect(console.stderr.contains(#""message":"stopped""#))
        } catch {
            console.signal(SIGTERM)
            _ = try? await console.wait(timeout: .seconds(30))
            await client.shutdown()
            await role.drop()
            throw error
        }
        await client.shutdown()
        await role.drop()
    }

    static func temporaryFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("console-credentials-\(UUID()).txt").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}
