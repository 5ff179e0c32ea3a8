import Foundation
import Postgres
import Queue

struct EnqueueCommand: Command {
    static let name = "enqueue"
    static let summary = "add a job to the queue"
    static let usage = """
        usage: storesync enqueue KIND --payload FILE [--unique-key K] [--priority P] [--run-at T]
                                 [--max-attempts N] [--json]

        Adds one job. FILE holds its JSON payload (`-` reads standard input; at most 1 MiB). With a unique key,
        enqueueing while a job with the same key is pending does nothing. Prints the new job's id.

          --priority P      -32768…32767, higher runs first (default 0)
          --run-at T        not before this ISO 8601 time, e.g. 2026-11-29T14:00:00Z
          --max-attempts N  1…1000 (default 25: at least 24 hours of retries)
        """

    static let maxPayloadBytes = 1 << 20

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        guard let payloadPath = try arguments.option("--payload") else { throw UsageError("--payload FILE is required") }
        var job = NewJob(kind: "placeholder")
        job.uniqueKey = try arguments.option("--unique-key")
        if let key = job.uniqueKey, key.isEmpty || key.utf8.count > 400 {
            throw UsageError("--unique-key must be 1…400 bytes")
        }
        if let priority = try arguments.option("--priority") {
            job.priority = Int16(try Parse.int(priority, "--priority", range: Int(Int16.min)...Int(Int16.max)))
        }
        if let runAt = try arguments.option("--run-at") { job.runAt = try Parse.date(runAt, "--run-at") }
        if let attempts = try arguments.option("--max-attempts") {
            job.maxAttempts = try Parse.int(attempts, "--max-attempts", range: 1...1000)
        }
        let json = arguments.flag("--json")
        guard let kind = arguments.positional() else { throw UsageError("KIND is required") }
        try arguments.finish()
        guard JobKind.isValid(kind) else {
            throw UsageError("KIND must be 1…100 of a-z 0-9 . _ - starting with a letter or digit, got \(kind.debugDescription)")
        }
        job.kind = kind
        job.payload = try readPayload(payloadPath)

        let id = try await environment.withPool { try await JobQueue(pool: $0).enqueue(job) }
        if json {
            Output.print(Output.Value.object([("id", id.map { .int(Int($0)) } ?? .null),
                                              ("enqueued", .bool(id != nil))]).text)
        } else if let id {
            Output.print("enqueued job \(id)")
        } else {
            Output.print("not enqueued: a job with unique key \(job.uniqueKey ?? "") is already pending")
        }
        return 0
    }

    private static func readPayload(_ path: String) throws -> String {
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let file = FileHandle(forReadingAtPath: path) else { throw UsageError("cannot read payload file \(path)") }
            handle = file
        }
        let data = try handle.read(upToCount: maxPayloadBytes + 1) ?? Data()
        guard data.count <= maxPayloadBytes else { throw UsageError("payload is larger than 1 MiB") }
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw UsageError("payload is not valid JSON")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw UsageError("payload is not UTF-8") }
        return text
    }
}
