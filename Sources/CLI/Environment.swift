import Foundation
import Logging
import Postgres

/// Settings read from the environment (`DATABASE_URL`, `STORESYNC_*`), validated before anything starts.
package struct Environment {
    package let values: [String: String]

    package init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    /// `DATABASE_URL`, required by every command that touches the database.
    package func databaseURL() throws -> String {
        guard let url = try databaseURL("DATABASE_URL") else {
            throw UsageError("DATABASE_URL is not set (e.g. postgresql://storesync@127.0.0.1:5432/storesync)")
        }
        return url
    }

    /// The connection string in variable `name`, validated; nil when unset.
    package func databaseURL(_ name: String) throws -> String? {
        guard let url = values[name], !url.isEmpty else { return nil }
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") || url.contains("=") else {
            throw UsageError("\(name) must be a postgresql:// URL or a libpq key=value string")
        }
        do {
            try ConnectionString.validate(url)
        } catch let error as PostgresError {
            throw UsageError("\(name) is not a valid connection string: \(error.message)")
        }
        return url
    }

    package func string(_ name: String) -> String? {
        values[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    package func int(_ name: String, range: ClosedRange<Int>) throws -> Int? {
        try string(name).map { try Parse.int($0, name, range: range) }
    }

    package func duration(_ name: String, range: ClosedRange<Duration>) throws -> Duration? {
        try string(name).map { try Parse.duration($0, name, range: range) }
    }

    /// Applies `STORESYNC_LOG_LEVEL` (debug, info, warning, error; default info).
    package func configureLogging() throws {
        guard let name = string("STORESYNC_LOG_LEVEL") else { return }
        guard let level = LogLevel(name: name) else {
            throw UsageError("STORESYNC_LOG_LEVEL must be one of debug, info, warning, error, got \(name.debugDescription)")
        }
        Logger.setLevel(level)
    }

    /// The connection pool's settings: `STORESYNC_DB_POOL_SIZE` (default `defaultSize`).
    package func postgres(defaultSize: Int, applicationName: String) throws -> PostgresConfiguration {
        PostgresConfiguration(url: try databaseURL(),
                              poolSize: try int("STORESYNC_DB_POOL_SIZE", range: 1...200) ?? defaultSize,
                              applicationName: applicationName)
    }
}

extension Environment {
    /// Runs `body` with a connection pool for a one-shot CLI command and closes it afterwards.
    package func withPool<T>(size: Int = 1, _ body: (PostgresPool) async throws -> T) async throws -> T {
        let pool = PostgresPool(try postgres(defaultSize: size, applicationName: "storesync-cli"))
        do {
            let value = try await body(pool)
            await pool.close()
            return value
        } catch {
            await pool.close()
            throw error
        }
    }
}
