import Foundation
import Postgres
import Queue

struct DeadLettersCommand: Command {
    static let name = "dead-letters"
    static let summary = "inspect, replay or discard jobs that gave up"
    static let usage = """
        usage: storesync dead-letters list [--kind K] [--limit N] [--json]
               storesync dead-letters show ID [--json]
               storesync dead-letters retry ID… | --all [--kind K] [--json]
               storesync dead-letters discard ID… [--json]

        list     newest first (default limit 100)
        show     the payload, headers, the stored webhook body (raw_base64) and every attempt's error
        retry    put back on the queue under the same id, due now, with fresh attempts
        discard  delete for good

        retry and discard report each ID once (an ID given twice is one ID) and exit 1 when any was not done.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        guard let action = arguments.positional() else { throw UsageError("say list, show, retry or discard") }
        let json = arguments.flag("--json")
        return try await environment.withPool { pool in
            try await run(action, DeadLetters(pool: pool), json: json, &arguments)
        }
    }

    private static func run(_ action: String, _ deadLetters: DeadLetters, json: Bool,
                            _ arguments: inout Arguments) async throws -> Int32 {
        switch action {
        case "list":
            let kind = try arguments.option("--kind")
            let limit = try arguments.option("--limit").map { try Parse.int($0, "--limit", range: 1...100_000) } ?? 100
            try arguments.finish()
            let entries = try await deadLetters.list(DeadLetters.Filter(kind: kind), limit: limit)
            if json {
                Output.print(Output.Value.array(entries.map(entryJSON)).text)
            } else {
                Output.print(entries.isEmpty ? "no dead letters" : Output.table(
                    ["ID", "KIND", "ATTEMPTS", "DEAD AT", "REASON"],
                    entries.map { [String($0.id), $0.kind, String($0.attempts), Output.iso($0.deadAt), oneLine($0.reason)] }))
            }
            return 0
        case "show":
            guard let text = arguments.positional() else { throw UsageError("show needs an ID") }
            try arguments.finish()
            guard let detail = try await deadLetters.show(id: try Parse.jobID(text)) else {
                FileHandle.standardError.write(Data("storesync dead-letters: no dead letter \(text)\n".utf8))
                return 1
            }
            let fields: [(String, Output.Value)] = [
                ("id", .int(Int(detail.entry.id))), ("kind", .string(detail.entry.kind)),
                ("reason", .string(detail.entry.reason)), ("attempts", .int(detail.entry.attempts)),
                ("max_attempts", .int(detail.maxAttempts)), ("priority", .int(Int(detail.priority))),
                ("unique_key", detail.uniqueKey.map { .string($0) } ?? .null),
                ("created_at", .string(Output.iso(detail.entry.createdAt))),
                ("dead_at", .string(Output.iso(detail.entry.deadAt))),
                ("payload", .raw(detail.payload)), ("headers", detail.headers.map { .raw($0) } ?? .null),
                ("raw_base64", detail.raw.map { .string($0.base64EncodedString()) } ?? .null),
                ("errors", .raw(detail.errors)),
            ]
            if json {
                Output.print(Output.Value.object(fields).text)
            } else {
                for (name, value) in fields { Output.print("\(name): \(value.text)") }
            }
            return 0
        case "retry":
            let all = arguments.flag("--all")
            let kind = try arguments.option("--kind")
            let given = distinct(try arguments.remainingPositionals().map(Parse.jobID))
            try arguments.finish()
            guard all != !given.isEmpty else { throw UsageError("retry needs IDs or --all (not both)") }
            guard all || kind == nil else { throw UsageError("--kind only goes with --all") }
            let ids = all ? try await deadLetters.ids(DeadLetters.Filter(kind: kind)) : given
            let results = try await deadLetters.retry(ids: ids)
            let outcomes = ids.map { id -> Outcome in
                switch results[id] ?? .notFound {
                case .requeued: Outcome(id: id, done: true, result: "requeued", text: "requeued")
                case .notFound: Outcome(id: id, done: false, result: "not_found", text: "no such dead letter")
                case .duplicateUniqueKey(let key):
                    Outcome(id: id, done: false, result: "kept", text: "kept; a pending job already has unique key \(key)",
                            uniqueKey: key)
                }
            }
            if ids.isEmpty && !json { Output.print("no dead letters to retry") }
            return report(outcomes, json: json)
        case "discard":
            let ids = distinct(try arguments.remainingPositionals().map(Parse.jobID))
            try arguments.finish()
            guard !ids.isEmpty else { throw UsageError("discard needs at least one ID") }
            let gone = Set(try await deadLetters.discard(ids: ids))
            return report(ids.map { id in
                gone.contains(id) ? Outcome(id: id, done: true, result: "discarded", text: "discarded")
                                  : Outcome(id: id, done: false, result: "not_found", text: "no such dead letter")
            }, json: json)
        default:
            throw UsageError("unknown action \(action.debugDescription); say list, show, retry or discard")
        }
    }

    /// What retry or discard did with one ID.
    private struct Outcome {
        let id: Int64
        let done: Bool
        /// The word scripts match on (`--json`).
        let result: String
        /// The line people read.
        let text: String
        var uniqueKey: String?
    }

    /// Prints one line (or one JSON object) per ID; exit status 1 when any was not done.
    private static func report(_ outcomes: [Outcome], json: Bool) -> Int32 {
        if json {
            Output.print(Output.Value.array(outcomes.map { outcome in
                .object([("id", .int(Int(outcome.id))), ("result", .string(outcome.result))]
                        + (outcome.uniqueKey.map { [("unique_key", .string($0))] } ?? []))
            }).text)
        } else {
            for outcome in outcomes { Output.print("\(outcome.id): \(outcome.text)") }
        }
        return outcomes.allSatisfy(\.done) ? 0 : 1
    }

    /// The IDs in the order given, each once: an ID named twice is still one dead letter, with one result.
    private static func distinct(_ ids: [Int64]) -> [Int64] {
        var seen = Set<Int64>()
        return ids.filter { seen.insert($0).inserted }
    }

    private static func entryJSON(_ entry: DeadLetters.Entry) -> Output.Value {
        .object([("id", .int(Int(entry.id))), ("kind", .string(entry.kind)), ("attempts", .int(entry.attempts)),
                 ("reason", .string(entry.reason)), ("dead_at", .string(Output.iso(entry.deadAt))),
                 ("created_at", .string(Output.iso(entry.createdAt)))])
    }

    private static func oneLine(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        return flat.count > 100 ? String(flat.prefix(99)) + "…" : flat
    }
}
