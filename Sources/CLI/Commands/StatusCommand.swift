import Foundation
import Postgres
import Queue

struct StatusCommand: Command {
    static let name = "status"
    static let summary = "show queue depth, oldest waiting job, leases by worker and dead letters"
    static let usage = """
        usage: storesync status [--json]

        Queue depth by kind and state (available = due now, scheduled = due later or waiting to retry,
        leased = running), the age of the oldest job waiting to be leased, leased jobs by worker, and the
        number of dead letters.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        try arguments.finish()
        let status = try await environment.withPool { try await QueueStatus.read(pool: $0) }
        if json {
            Output.print(Output.Value.object([
                ("depth", .array(status.depths.map {
                    .object([("kind", .string($0.kind)), ("state", .string($0.state)), ("count", .int($0.count))])
                })),
                ("oldest_available_age_seconds", .double(status.oldestAvailableAgeSeconds)),
                ("leases", .array(status.leases.map {
                    .object([("worker", .string($0.worker)), ("jobs", .int($0.count)),
                             ("oldest_leased_at", .string(Output.iso($0.oldestLeasedAt)))])
                })),
                ("dead_letters", .int(status.deadLetters)),
            ]).text)
            return 0
        }
        Output.print("queue depth")
        Output.print(status.depths.isEmpty ? "  (empty)" : Output.table(
            ["KIND", "STATE", "JOBS"], status.depths.map { [$0.kind, $0.state, String($0.count)] }))
        Output.print("\noldest available job waiting: \(String(format: "%.1f", status.oldestAvailableAgeSeconds)) s")
        Output.print("\nleases")
        Output.print(status.leases.isEmpty ? "  (none)" : Output.table(
            ["WORKER", "JOBS", "OLDEST LEASE"], status.leases.map { [$0.worker, String($0.count), Output.iso($0.oldestLeasedAt)] }))
        Output.print("\ndead letters: \(status.deadLetters)")
        return 0
    }
}
