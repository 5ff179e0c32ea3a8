import Foundation
import Postgres

/// A login role of its own for one test, a member of one of StoreSync's least-privilege roles
/// (`storesync_worker`, `storesync_ingest`, `storesync_api`), so a test runs the daemon with exactly the grants production gives it.
/// Roles belong to the whole cluster: the name is unique to the test's database, and `drop()` removes it.
public struct TestRole: Sendable {
    public let name: String
    /// `database`'s URL, logging in as this role.
    public let url: String

    public static func create(memberOf group: String, for database: TestDatabase) async throws -> TestRole {
        let name = "\(database.name)_\(group.replacingOccurrences(of: "storesync_", with: ""))"
        let password = UUID().uuidString
        let admin = try await PostgresConnection.connect(url: try TestDatabase.adminURL, applicationName: "storesync-tests")
        // CREATE ROLE takes no parameters: the name is generated, the group fixed, the password a UUID.
        try await admin.query("CREATE ROLE \(name) LOGIN PASSWORD '\(password)' IN ROLE \(group)")
        await admin.close()
        guard var components = URLComponents(string: database.url) else {
            throw TestSetupError("the test database URL is not a URL: cannot log in as \(name)")
        }
        components.user = name
        components.password = password
        return TestRole(name: name, url: components.string ?? database.url)
    }

    /// Drops the role; call after everything logged in as it has disconnected.
    public func drop() async {
        guard let admin = try? await PostgresConnection.connect(url: try TestDatabase.adminURL,
                                                                 applicationName: "storesync-tests") else { return }
        _ = try? await admin.query("DROP ROLE IF EXISTS \(name)")
        await admin.close()
    }
}
