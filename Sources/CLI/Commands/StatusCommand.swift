import Foundation
import Postgres
import Queue
import Sync

struct StatusCommand: Command {
    static let name = "status"
    static let summary = "show queue depth, oldest waiting job, leases by worker, dead letters and schedules"
    static let usage = """
        usage: storesync status [--json]

        Queue depth by kind and state (available = due now, scheduled = due later or waiting to retry,
        leased = running; scheduled counts are estimated from a sample of the table once the queue holds
        more than about 100,000 jobs), the age of the oldest job waiting to be leased, leased jobs by worker, and the
        number of dead letters; then each schedule's last run (period, claiming worker), and for the daily
        resync the lineages still waiting and the drift found — changes no notification had delivered, the
        sign that notifications are being lost.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        try arguments.finish()
        let (status, schedules) = try await environment.withPool { pool in
            (try await QueueStatus.read(pool: pool), try await pool.transaction { try ScheduleReport.read(on: $0) })
        }
        if json {
            Output.print(Output.Value.object([
                ("depth", .array(status.depths.map {
                    .object([("kind", .string($0.kind)), ("state", .string($0.state)), ("count", .int($0.count))])
                })),
                ("scheduled_estimated", .bool(status.scheduledEstimated)),
                ("oldest_available_age_seconds", .double(status.oldestAvailableAgeSeconds)),
                ("leases", .array(status.leases.map {
                    .object([("worker", .string($0.worker)), ("jobs", .int($0.count)),
                             ("oldest_leased_at", .string(Output.iso($0.oldestLeasedAt)))])
                })),
                ("dead_letters", .int(status.deadLetters)),
                ("schedules", .array(schedules.map {
                    .object([("schedule", .string($0.schedule)), ("period", .string($0.period)),
                             ("claimed_by", .string($0.claimedBy)), ("claimed_at", .string(Output.iso($0.claimedAt))),
                             ("running", .bool($0.running)), ("resyncs_pending", .int($0.resyncsPending)),
                             ("drift", .int($0.drift))])
                })),
            ]).text)
            return 0
        }
        Output.print("queue depth")
        Output.print(status.depths.isEmpty ? "  (empty)" : Output.table(
            ["KIND", "STATE", "JOBS"], status.depths.map { [$0.kind, $0.state, String($0.count)] }))
        if status.scheduledEstimated { Output.print("  (scheduled counts estimated from a sample of the table)") }
        Output.print("\noldest available job waiting: \(String(format: "%.1f", status.oldestAvailableAgeSeconds)) s")
        Output.print("\nleases")
        Output.print(status.leases.isEmpty ? "  (none)" : Output.table(
            ["WORKER", "JOBS", "OLDEST LEASE"], status.leases.map { [$0.worker, String($0.count), Output.iso($0.oldestLeasedAt)] }))
        Output.print("\ndead letters: \(status.deadLetters)")
        Output.print("\nschedules")
        Output.print(schedules.isEmpty ? "  (none run yet)" : Output.table(
            ["SCHEDULE", "LAST PERIOD", "CLAIMED AT", "BY", "STATE", "RESYNCS WAITING", "DRIFT"],
            schedules.map { [$0.schedule, $0.period, Output.iso($0.claimedAt), $0.claimedBy, $0.running ? "running" : "done",
                             String($0.resyncsPending), String($0.drift)] }))
        return 0
    }
}
