import Foundation
import Migrations
import Postgres
import TestSupport
import Testing

/// Migrations: applied once in order, safe from several processes, and a schema that does not match the
/// build is refused with a message that says what to do.
@Suite struct MigratorTests {
    @Test func everyFileInSqlIsCompiledIntoTheBuildInOrder() throws {
        let sql = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../sql")
        let files = try FileManager.default.contentsOfDirectory(atPath: sql.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files == Migration.all.map(\.fileName))
        #expect(Migration.all.map(\.version) == Array(1...Migration.all.count))
        for migration in Migration.all {
            let text = try String(contentsOf: sql.appendingPathComponent(migration.fileName), encoding: .utf8)
            #expect(text == migration.sql, "\(migration.fileName) differs from the compiled copy: rebuild")
        }
    }

    @Test func concurrentMigrateProcessesApplyEachMigrationOnce() async throws {
        try await TestDatabase.with(migrated: false) { database in
            let children = try (0..<3).map { _ in
                try ChildProcess("storesync", ["migrate"], environment: ["DATABASE_URL": database.url])
            }
            for child in children {
                let status = try await child.wait()
                #expect(status == 0, "migrate failed: \(child.stderr)")
            }
            let versions = try await database.pool.query("SELECT version FROM schema_migrations ORDER BY version")
                .map { try $0.decode(0, as: Int.self) }
            #expect(versions == Migration.all.map(\.version))
        }
    }

    @Test func anEditedAppliedMigrationIsRefused() async throws {
        try await TestDatabase.with { database in
            let edited = Migration.all.map { Migration(version: $0.version, name: $0.name, sql: $0.sql + "\n-- edited") }
            let error = await #expect(throws: MigrationError.self) {
                try await database.pool.withConnection { _ = try await Migrator(migrations: edited).migrate($0) }
            }
            #expect(error?.code == .checksumMismatch)
            #expect(error?.message.contains("V0001__queue.sql was edited after it was applied") == true)
        }
    }

    @Test func aDatabaseAheadOfTheBuildIsRefused() async throws {
        try await TestDatabase.with { database in
            try await database.pool.query(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'future', 'x')")
            let error = await #expect(throws: MigrationError.self) {
                try await database.pool.withConnection { try await Migrator().requireCurrent($0) }
            }
            #expect(error?.code == .databaseAhead)
        }
    }

    @Test("serve and work refuse an unmigrated database with exit 2 and one line saying why",
          arguments: [["work", "--metrics-listen", "off"], ["serve", "--listen", "127.0.0.1:0"]])
    func refusesToStartOnAnUnmigratedDatabase(_ command: [String]) async throws {
        try await TestDatabase.with(migrated: false) { database in
            let result = try await ChildProcess.run("storesync", command, environment: ["DATABASE_URL": database.url])
            #expect(result.status == 2)
            #expect(result.stderr.contains("database schema is behind this build"))
            #expect(result.stderr.contains("storesync migrate"))
        }
    }

    @Test func aSchemaOwnerWithoutCreateRoleCanMigrate() async throws {
        // Least privilege: the owner that migrates need not create roles; an administrator made them (the
        // template migration, run as one, did).
        let owner = "storesync_owner_\(UInt32.random(in: 0...UInt32.max))"
        let password = UUID().uuidString
        let admin = try await PostgresConnection.connect(url: TestDatabase.adminURL)
        try await admin.executeScript("CREATE ROLE \(owner) LOGIN NOCREATEROLE NOSUPERUSER PASSWORD '\(password)'")
        try await TestDatabase.with(migrated: false) { database in
            // The database owner owns its public schema (PostgreSQL 15's pg_database_owner).
            try await admin.executeScript("ALTER DATABASE \(database.name) OWNER TO \(owner)")
            guard var url = URLComponents(string: database.url) else { throw TestSetupError("unparsable test URL") }
            url.user = owner
            url.password = password
            let result = try await ChildProcess.run("storesync", ["migrate"], environment: ["DATABASE_URL": url.string!])
            #expect(result.status == 0, "migrate as \(owner) failed: \(result.stderr)")
        }
        try await admin.query("DROP ROLE \(owner)")
        await admin.close()
    }
}
