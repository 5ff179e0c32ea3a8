import Logging
import Migrations
import Postgres

/// A database that cannot serve this build however long one waits: a schema another build migrated, or a
/// login the server refuses. The daemons exit 2 with its one line, as for a bad argument.
struct StartupRefusal: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// How `serve` and `work` come up when the database may not be: a process started during an outage (a host
/// rebooting with its database, a restart loop after a crash) waits for it instead of exiting, so a
/// supervisor's restart limit is not spent on an outage that ends by itself.
enum DatabaseStartup {
    /// Returns once the database answers and its schema is this build's: every failed attempt (unreachable,
    /// starting up, or too slow for the statement timeout) is logged with the next wait, and waits grow from
    /// `base` to `cap`. Throws `StartupRefusal` for a schema
    /// mismatch or a refused login, which waiting cannot mend, and `CancellationError` when the task is
    /// cancelled (a stop requested meanwhile).
    static func waitUntilReady(_ pool: PostgresPool, logger: Logger, base: Duration = .milliseconds(250),
                               cap: Duration = .seconds(5)) async throws {
        var backoff = ReconnectBackoff(base: base, cap: cap)
        var attempt = 0
        while true {
            attempt += 1
            do {
                try await pool.withConnection { try await Migrator().requireCurrent($0) }
                if attempt > 1 { logger.info("database ready", ["attempts": .int(attempt)]) }
                return
            } catch let error as MigrationError {
                throw StartupRefusal(message: error.message)
            } catch let error as PostgresError where error.isTransient || error.sqlState == "57014" {
                try Task.checkCancellation()
                let wait = backoff.recordFailure()
                logger.warning("waiting for the database", [
                    "attempt": .int(attempt), "retry_in_ms": .int(Int(wait.milliseconds)), "error": .string(error.message),
                ])
                try await Task.sleep(for: wait)
            } catch let error as PostgresError {
                throw StartupRefusal(message: "the database refused to serve this process: \(error.message)")
            }
        }
    }
}
