import Foundation
import Postgres

/// A database of its own for one test, cloned from the migrated template that the test command prepares
/// (`deploy/dev.sh test`), and dropped by `drop()`.
public struct TestDatabase: Sendable {
    public let name: String
    public let url: String
    public let pool: PostgresPool

    /// The admin connection URL from `STORESYNC_TEST_ADMIN_URL` (a role allowed to CREATE DATABASE).
    public static var adminURL: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["STORESYNC_TEST_ADMIN_URL"], !url.isEmpty else {
                throw TestSetupError("STORESYNC_TEST_ADMIN_URL is not set: run the tests with `deploy/dev.sh test`")
            }
            return patientConnect(url)
        }
    }

    /// A fresh, migrated database. With `migrated: false` it is empty (for migration tests).
    public static func create(migrated: Bool = true, poolSize: Int = 4) async throws -> TestDatabase {
        let admin = try adminURL
        let name = "storesync_t_\(UInt64.random(in: 0...UInt64.max) & 0xffff_ffff_ffff)"
        let template = migrated
            ? (ProcessInfo.processInfo.environment["STORESYNC_TEST_TEMPLATE"] ?? "storesync_test_template")
            : "template0"
        let connection = try await PostgresConnection.connect(url: admin, applicationName: "storesync-tests")
        // CREATE DATABASE takes no parameters; both names are generated or fixed identifiers.
        try await connection.query("CREATE DATABASE \(name) TEMPLATE \(template)")
        await connection.close()
        let url = replacingDatabase(in: admin, with: name)
        return TestDatabase(name: name, url: url,
                            pool: PostgresPool(PostgresConfiguration(url: url, poolSize: poolSize,
                                                                     acquireTimeout: .seconds(20),
                                                                     applicationName: "storesync-tests")))
    }

    /// Closes the pool and drops the database, disconnecting anything still attached.
    public func drop() async {
        await pool.close()
        guard let admin = try? Self.adminURL,
              let connection = try? await PostgresConnection.connect(url: admin, applicationName: "storesync-tests")
        else { return }
        _ = try? await connection.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        await connection.close()
    }

    /// Runs `body` with a fresh database and drops it afterwards, also when `body` throws.
    public static func with<T>(migrated: Bool = true, poolSize: Int = 4,
                               _ body: (TestDatabase) async throws -> T) async throws -> T {
        let database = try await create(migrated: migrated, poolSize: poolSize)
        do {
            let value = try await body(database)
            await database.drop()
            return value
        } catch {
            await database.drop()
            throw error
        }
    }

    /// Tests run in parallel on a 2-core machine, many creating databases at once: give connection set-up
    /// far more than the daemon's 5 s before calling it a failure.
    static func patientConnect(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.scheme?.hasPrefix("postgres") == true else {
            return url + " connect_timeout=60"
        }
        var items = (components.queryItems ?? []).filter { $0.name != "connect_timeout" }
        items.append(URLQueryItem(name: "connect_timeout", value: "60"))
        components.queryItems = items
        return components.string ?? url
    }

    static func replacingDatabase(in url: String, with name: String) -> String {
        guard var components = URLComponents(string: url) else { return url + " dbname=\(name)" }
        components.path = "/" + name
        return components.string ?? url
    }
}

/// The test environment is not set up; the message says how to fix it.
public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
