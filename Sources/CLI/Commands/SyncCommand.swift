import Accounts
import Foundation
import Mirror
import Postgres
import Sync

struct SyncCommand: Command {
    static let name = "sync"
    static let summary = "re-fetch a connection's purchases (or one lineage) from the store now"
    static let usage = """
        usage: storesync sync --connection C [--purchase LINEAGE] [--json]

        Enqueues resync jobs now — the same re-fetch → snapshot → apply path as the daily resync, for every live
        lineage of connection C (not expired or revoked for longer than the resync horizon) or just LINEAGE
        (Apple originalTransactionId, Google first purchase token), whatever its state. They run at the
        connection's resync rate (STORESYNC_RESYNC_RATE_SHARE of the store's published limit), after
        notifications and consumption answers. What they find that no notification delivered is recorded as
        drift (`storesync status`).
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        guard let connectionText = try arguments.option("--connection") else { throw UsageError("--connection is required") }
        let connectionID = try Parse.id(connectionText, "--connection")
        let lineage = try arguments.option("--purchase")
        if let lineage, !(1...4096).contains(lineage.utf8.count) {
            throw UsageError("--purchase must be 1…4096 bytes")
        }
        let settings = try WorkCommand.resyncSettings(environment)
        try arguments.finish()
        let added = try await environment.withPool { pool in
            try await pool.transaction { db -> Int in
                guard let connection = try StoreConnections.get(id: connectionID, on: db) else {
                    throw SetupError(.notFound, "no connection \(connectionID)")
                }
                if let lineage, try !Purchases.exists(connectionID: connectionID, lineage: lineage, on: db) {
                    throw SetupError(.notFound, "connection \(connectionID) has no purchase \(lineage)")
                }
                let batch = "manual-\(Int64(Date().timeIntervalSince1970 * 1000))"
                return try ResyncPlanner.enqueue(connection: connection, lineage: lineage, batch: batch, reason: "manual",
                                                 settings: settings, priority: -5, on: db)
            }
        }
        Output.print(json ? Output.Value.object([("enqueued", .int(added))]).text : "\(added) resync job(s) enqueued")
        return 0
    }
}
