import Foundation
import Postgres
import Queue
import TestSupport
import Testing

/// The command line: bad arguments and configuration fail fast with exit status 2 and one clear line;
/// enqueue, status and dead-letter commands do what on-call expects.
@Suite struct CLITests {
    static let payloadFile: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-cli-payload.json").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("{\"a\": 1}".utf8))
        return path
    }()

    @Test(arguments: [
        (["frobnicate"], "unknown command \"frobnicate\""),
        (["enqueue", "test.record"], "--payload FILE is required"),
        (["enqueue", "Bad Kind", "--payload", "/dev/null"], "KIND must be"),
        (["enqueue", "test.record", "--payload", "/nonexistent"], "cannot read payload file"),
        (["enqueue", "test.record", "--payload", "PAYLOAD", "--priority", "99999"], "--priority must be an integer"),
        (["enqueue", "test.record", "--payload", "PAYLOAD", "--run-at", "tomorrow"], "--run-at must be an ISO 8601 time"),
        (["work", "--concurrency", "0"], "concurrency must be an integer in 1...10000"),
        (["work", "--lease-duration", "forever"], "lease duration must be a duration"),
        (["work", "--lease-duration", "nan"], "lease duration must be a duration"),
        // Far past Int64 milliseconds: refused by range, never converted (which traps).
        (["work", "--lease-duration", "1e17s"], "lease duration must be between 0.1 seconds and 86400.0 seconds"),
        (["work", "--poll-interval", "1e308d"], "poll interval must be between"),
        (["serve", "--grace-period", "1e300"], "grace period must be between 0.0 seconds and 600.0 seconds, got \"1e300\""),
        (["serve", "--max-connections-per-client", "-1"], "--max-connections-per-client must be an integer in 0...100000"),
        (["serve", "--listen", "::1:8080"],
         "--listen must be HOST:PORT or [IPV6]:PORT, e.g. 0.0.0.0:8080 or [::]:8080, but an IPv6 address must be "
            + "written in brackets, e.g. [::1]:8080 or [::]:8080; got \"::1:8080\""),
        (["work", "--metrics-listen", "[::1"],
         "--metrics-listen must be HOST:PORT or [IPV6]:PORT, e.g. 0.0.0.0:8080 or [::]:8080, but the bracket opening "
            + "the IPv6 address is never closed; got \"[::1\""),
        (["work", "--bogus"], "unknown option --bogus"),
        (["dead-letters", "retry"], "retry needs IDs or --all"),
        (["dead-letters", "retry", "--all", "7"], "retry needs IDs or --all"),
        (["dead-letters", "show", "abc"], "not a job id: \"abc\""),
        (["dead-letters", "explode"], "unknown action \"explode\""),
        (["bench", "queue"], "--jobs N is required"),
        (["accounts", "add", "--host", "bad host!"], "--host must be a host name"),
        (["accounts", "add"], "--host is required"),
        (["accounts", "add", "--host", ".."], "--host must be a host name"),
        (["accounts", "add", "--host", "-"], "--host must be a host name"),
        (["accounts", "add", "--host", "12345"], "--host must be a host name"),
        (["accounts", "add", "--host", "billing-.example.com"], "--host must be a host name"),
        (["accounts", "add", "--host", "billing.example.com."], "--host must be a host name"),
        (["accounts", "add", "--host", String(repeating: "a", count: 64) + ".example.com"], "--host must be a host name"),
        (["accounts", "add", "--host", "billing.example.com", "--name", "Tab\tName"], "--name must be at most 200 characters"),
        // One Swift Character, 301 code points: PostgreSQL's length() counts the latter.
        (["accounts", "add", "--host", "billing.example.com", "--name", "a" + String(repeating: "\u{301}", count: 300)],
         "--name must be at most 200 characters (Unicode code points)"),
        (["verify", "apple", "--bundle-id", "b", "--environment", "Staging"], "--environment must be Production or Sandbox"),
    ])
    func badArgumentsExitTwoWithAReason(arguments: [String], message: String) async throws {
        let resolved = arguments.map { $0 == "PAYLOAD" ? Self.payloadFile : $0 }
        let result = try await ChildProcess.run(executable(for: resolved[0]), resolved,
                                                environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test(arguments: [
        ([String: String](), "DATABASE_URL is not set"),
        (["DATABASE_URL": "mysql://x"], "DATABASE_URL must be a postgresql:// URL"),
        (["DATABASE_URL": "postgresql://x@127.0.0.1:1/x", "STORESYNC_LOG_LEVEL": "loud"], "STORESYNC_LOG_LEVEL must be one of"),
        (["DATABASE_URL": "postgresql://x@127.0.0.1:1/x", "STORESYNC_CONCURRENCY": "many"], "concurrency must be an integer"),
        (["DATABASE_URL": "postgresql://x@127.0.0.1:1/x", "STORESYNC_DB_POOL_SIZE": "0"], "STORESYNC_DB_POOL_SIZE must be"),
        (["DATABASE_URL": "postgresql://x@127.0.0.1:1/x", "STORESYNC_GRACE_PERIOD": "1e300"], "grace period must be between"),
    ])
    func badConfigurationExitsTwoWithAReason(environment: [String: String], message: String) async throws {
        var env = environment
        if env["DATABASE_URL"] == nil { env["DATABASE_URL"] = "" }
        let result = try await ChildProcess.run("storesync", ["work"], environment: env)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }

    @Test(arguments: ["postgresql://u:topsecret@[::1/db", "postgresql://u:top%zzsecret@127.0.0.1:1/db"])
    func aDatabaseURLLibpqCannotParseIsAConfigurationErrorThatHidesThePassword(url: String) async throws {
        let result = try await ChildProcess.run("storesync", ["status"], environment: ["DATABASE_URL": url])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("storesync status: DATABASE_URL is not a valid connection string: "),
                "stderr was: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "stderr was: \(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains("topsecret") && !result.stderr.contains("top%zzsecret"),
                "stderr was: \(result.stderr)")
    }

    @Test func helpIsAvailableForEveryCommand() async throws {
        for command in ["migrate", "work", "enqueue", "status", "dead-letters", "accounts", "verify", "bench", "simulator"] {
            let result = try await ChildProcess.run(executable(for: command), [command, "--help"])
            #expect(result.status == 0)
            #expect(result.stdout.contains("usage: \(executable(for: command)) \(command)"))
        }
    }

    @Test func enqueueStatusAndDeadLetterRoundTrip() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            let enqueued = try await ChildProcess.run(
                "storesync", ["enqueue", "test.record", "--payload", "-", "--unique-key", "k1", "--priority", "5", "--json"],
                environment: env, stdin: Data("{\"x\": [1, 2]}".utf8))
            #expect(enqueued.status == 0, "\(enqueued.stderr)")
            #expect(enqueued.stdout.contains("\"enqueued\":true"))
            let duplicate = try await ChildProcess.run(
                "storesync", ["enqueue", "test.record", "--payload", Self.payloadFile, "--unique-key", "k1"], environment: env)
            #expect(duplicate.stdout.contains("already pending"))

            let status = try await ChildProcess.run("storesync", ["status", "--json"], environment: env)
            #expect(status.stdout.contains("{\"kind\":\"test.record\",\"state\":\"available\",\"count\":1}"))
            #expect(status.stdout.contains("\"dead_letters\":0"))

            // Dead-letter it by hand through the queue's own path, then replay it from the CLI.
            let connection = try await PostgresConnection.connect(url: database.url)
            let leased = try await JobQueue.lease(owner: "w", limit: 1, duration: .seconds(60), on: connection)
            _ = try await JobQueue.finish([Finish(job: leased[0], result: .deadLetter(reason: "product P is not mapped"))],
                                          owner: "w", on: connection)
            await connection.close()
            let id = String(leased[0].id)

            let list = try await ChildProcess.run("storesync", ["dead-letters", "list"], environment: env)
            #expect(list.stdout.contains("product P is not mapped"))
            let show = try await ChildProcess.run("storesync", ["dead-letters", "show", id, "--json"], environment: env)
            #expect(show.stdout.contains("\"payload\":{\"x\": [1, 2]}"))
            let retry = try await ChildProcess.run("storesync", ["dead-letters", "retry", id], environment: env)
            #expect(retry.status == 0)
            #expect(retry.stdout.contains("\(id): requeued"))
            let back = try await database.pool.query("SELECT id, attempt, unique_key FROM jobs")
            #expect(try back[0].decode(0, as: Int64.self) == leased[0].id)
            #expect(try back[0].decode(1, as: Int.self) == 0)
            #expect(try await DeadLetters(pool: database.pool).count() == 0)

            let missing = try await ChildProcess.run("storesync", ["dead-letters", "discard", "424242"], environment: env)
            #expect(missing.status == 1)
            #expect(missing.stdout.contains("424242: no such dead letter"))
        }
    }

    /// Dead-letters `count` jobs through the queue's own path and returns their ids.
    private static func deadLetters(_ count: Int, in database: TestDatabase) async throws -> [Int64] {
        let queue = JobQueue(pool: database.pool)
        for _ in 0..<count { try await queue.enqueue(NewJob(kind: "test.record")) }
        let connection = try await PostgresConnection.connect(url: database.url)
        let leased = try await JobQueue.lease(owner: "w", limit: count, duration: .seconds(60), on: connection)
        _ = try await JobQueue.finish(leased.map { Finish(job: $0, result: .deadLetter(reason: "gave up")) },
                                      owner: "w", on: connection)
        await connection.close()
        return leased.map(\.id).sorted()
    }

    @Test func anIDGivenTwiceIsOneDeadLetterWithOneResult() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            let ids = try await Self.deadLetters(2, in: database).map(String.init)
            let retry = try await ChildProcess.run("storesync", ["dead-letters", "retry", ids[0], ids[0]], environment: env)
            #expect(retry.status == 0, "\(retry.stdout) \(retry.stderr)")
            #expect(retry.stdout == "\(ids[0]): requeued\n")
            let discard = try await ChildProcess.run("storesync", ["dead-letters", "discard", ids[1], ids[1], "424242", "--json"],
                                                     environment: env)
            #expect(discard.status == 1)
            #expect(discard.stdout == #"[{"id":\#(ids[1]),"result":"discarded"},{"id":424242,"result":"not_found"}]"# + "\n")
            let again = try await ChildProcess.run("storesync", ["dead-letters", "retry", ids[0], "--json"], environment: env)
            #expect(again.status == 1)
            #expect(again.stdout == #"[{"id":\#(ids[0]),"result":"not_found"}]"# + "\n")
            let none = try await ChildProcess.run("storesync", ["dead-letters", "retry", "--all", "--json"], environment: env)
            #expect(none.status == 0)
            #expect(none.stdout == "[]\n")
        }
    }

    @Test func accountsAreAddedOnceAndListed() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            let added = try await ChildProcess.run("storesync", ["accounts", "add", "--host", "Billing.Example.com",
                                                                 "--name", "Example"], environment: env)
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stdout.contains("added for billing.example.com"))
            let again = try await ChildProcess.run("storesync", ["accounts", "add", "--host", "billing.example.com"],
                                                   environment: env)
            #expect(again.status == 1)
            #expect(again.stderr.contains("already exists"))
            let list = try await ChildProcess.run("storesync", ["accounts", "list", "--json"], environment: env)
            #expect(list.stdout.contains("\"host\":\"billing.example.com\",\"name\":\"Example\""))
        }
    }
}
