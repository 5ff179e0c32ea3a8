import Logging
import Migrations
import Postgres

struct MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "apply the schema migrations this build carries (safe to run from several processes)"
    static let usage = """
        usage: storesync migrate [--status] [--json]

        Applies every pending migration from sql/ (compiled into this binary) in order, each in its own
        transaction, recording a checksum. Concurrent runs wait for each other on an advisory lock. An
        applied migration whose file has since changed is refused.

          --status   only report applied and pending migrations; change nothing
          --json     machine-readable output
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let statusOnly = arguments.flag("--status")
        let json = arguments.flag("--json")
        try arguments.finish()
        let connection = try await PostgresConnection.connect(url: try environment.databaseURL(),
                                                              applicationName: "storesync-migrate")
        let migrator = Migrator()
        if statusOnly {
            let status = try await migrator.status(connection)
            if json {
                Output.print(Output.Value.object([
                    ("applied", .array(status.applied.map { .int($0) })), ("pending", .array(status.pending.map { .int($0) })),
                ]).text)
            } else {
                Output.print("applied: \(status.applied.map(String.init).joined(separator: ", "))")
                Output.print("pending: \(status.pending.isEmpty ? "none" : status.pending.map(String.init).joined(separator: ", "))")
            }
            return status.pending.isEmpty ? 0 : 1
        }
        let applied = try await migrator.migrate(connection)
        if json {
            Output.print(Output.Value.object([("applied", .array(applied.map { .int($0) }))]).text)
        } else {
            Logger(component: "migrate").info(applied.isEmpty ? "schema is up to date" : "migrations applied",
                                              ["versions": .string(applied.map(String.init).joined(separator: ","))])
        }
        return 0
    }
}
