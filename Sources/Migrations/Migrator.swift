import Postgres

/// Why the schema and this build disagree.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// An applied migration's SQL differs from the file of the same version in this build.
        public static let checksumMismatch = Code("checksum mismatch")
        /// The database has migrations this build does not know (a newer build migrated it).
        public static let databaseAhead = Code("database ahead")
        /// The database lacks migrations this build needs (`storesync migrate` not run yet).
        public static let databaseBehind = Code("database behind")
    }

    public let code: Code
    public let message: String
    public var description: String { message }
}

/// What `check` found: which versions are applied and which are pending.
public struct SchemaStatus: Sendable, Equatable {
    public let applied: [Int]
    public let pending: [Int]
}

/// Applies `Migration.all` in order, each in its own transaction and recorded with a SHA-256 of its text.
///
/// A session-level advisory lock serialises concurrent `storesync migrate` runs: the second waits, then
/// finds nothing left to do.
public struct Migrator: Sendable {
    static let lockKey: Int64 = 0x5354_4f52_4553_594e  // "STORESYN"
    let migrations: [Migration]

    public init(migrations: [Migration] = Migration.all) {
        self.migrations = migrations
    }

    /// Brings the database up to date; returns the versions applied by this call.
    public func migrate(_ connection: PostgresConnection) async throws -> [Int] {
        try await connection.query("SELECT pg_advisory_lock($1)", [Self.lockKey])
        do {
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version    integer PRIMARY KEY,
                    name       text NOT NULL,
                    checksum   text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """)
            let applied = try await verifyApplied(connection)
            var done: [Int] = []
            for migration in migrations where !applied.contains(migration.version) {
                try await connection.executeScript("""
                    BEGIN;
                    \(migration.sql)
                    ;
                    COMMIT;
                    """)
                try await connection.query(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    [migration.version, migration.name, try await checksum(of: migration, on: connection)])
                done.append(migration.version)
            }
            try await connection.query("SELECT pg_advisory_unlock($1)", [Self.lockKey])
            return done
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock($1)", [Self.lockKey])
            throw error
        }
    }

    /// Compares the database with this build without changing anything.
    public func status(_ connection: PostgresConnection) async throws -> SchemaStatus {
        let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL")
        guard try exists[0].decode(0, as: Bool.self) else {
            return SchemaStatus(applied: [], pending: migrations.map(\.version))
        }
        let applied = try await verifyApplied(connection)
        return SchemaStatus(applied: applied.sorted(),
                            pending: migrations.map(\.version).filter { !applied.contains($0) })
    }

    /// Throws unless the database is exactly at this build's version: what `work` and `serve` check at start.
    public func requireCurrent(_ connection: PostgresConnection) async throws {
        let status = try await status(connection)
        guard status.pending.isEmpty else {
            throw MigrationError(code: .databaseBehind, message:
                "database schema is behind this build: migrations \(status.pending.map(String.init).joined(separator: ", ")) "
                + "are not applied; run `storesync migrate`")
        }
    }

    /// Checks every applied migration against this build and returns their versions.
    private func verifyApplied(_ connection: PostgresConnection) async throws -> Set<Int> {
        let rows = try await connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
        var applied: Set<Int> = []
        for row in rows {
            let version = try row.decode(0, as: Int.self)
            guard let migration = migrations.first(where: { $0.version == version }) else {
                throw MigrationError(code: .databaseAhead, message:
                    "database has migration \(version) (\(try row.decode(1, as: String.self))) that this build does not "
                    + "know; it was migrated by a newer storesync — deploy that build instead")
            }
            let expected = try await checksum(of: migration, on: connection)
            guard try row.decode(2, as: String.self) == expected else {
                throw MigrationError(code: .checksumMismatch, message:
                    "migration \(migration.fileName) was edited after it was applied (checksum differs); "
                    + "restore the original file and put the change in a new migration")
            }
            applied.insert(version)
        }
        return applied
    }

    private func checksum(of migration: Migration, on connection: PostgresConnection) async throws -> String {
        let rows = try await connection.query("SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')", [migration.sql])
        return try rows[0].decode(0, as: String.self)
    }
}
