import Foundation
import Postgres

/// A backend's credentials for the Mobile Stores API (an OAuth 2.0 confidential client using the client
/// credentials grant): one account's, with the scopes its tokens may carry. Its secret is never stored.
public struct APIClient: Sendable, Equatable {
    /// The `client_id`.
    public let id: String
    public let accountID: Int64
    public let name: String
    public let scopes: [String]
    public let createdAt: Date
    public let revokedAt: Date?
}

/// Creating, listing and revoking API clients, as `storesync api-clients` does.
public enum APIClients {
    /// What the backend endpoints require a token to carry, and what a new client gets unless told otherwise.
    public static let defaultScope = "access-global-api"

    /// A client just created, with the secret that is shown this once.
    public struct Created: Sendable {
        public let client: APIClient
        public let secret: String
    }

    /// Whether `scope` is one scope token as RFC 6749 §3.3 spells them (printable ASCII but space, `"` and
    /// `\`), at most 100 characters.
    public static func isValidScope(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.count <= 100
            && scope.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5b).contains($0) || (0x5d...0x7e).contains($0) }
    }

    /// A new client of `accountID`; `sha256` hashes its secret (the Crypto adapter's digest, injected so this
    /// module stays free of C). Throws `AccountsError` for an invalid name or scope.
    public static func add(accountID: Int64, name: String, scopes: [String] = [defaultScope],
                           sha256: @Sendable (Data) -> Data, on db: isolated PostgresConnection) throws -> Created {
        guard (1...200).contains(name.count) else { throw AccountsError(.invalidClient, "a client's name is 1…200 characters") }
        guard (1...16).contains(scopes.count) else { throw AccountsError(.invalidClient, "a client has 1…16 scopes") }
        if let bad = scopes.first(where: { !isValidScope($0) }) {
            throw AccountsError(.invalidClient, "scope \(bad.debugDescription.prefix(110)) is not a scope token")
        }
        var seen = Set<String>()
        let unique = scopes.filter { seen.insert($0).inserted }
        let secret = Secrets.random()
        let client = try db.query("""
            INSERT INTO api_clients (id, account_id, name, scopes, secret_sha256)
            VALUES (gen_random_uuid(), $1, $2, $3::text[], $4::bytea)
            RETURNING \(APIClient.columns)
            """, [accountID, name, PostgresArray(unique), sha256(Data(secret.utf8))]).map(APIClient.init(row:))[0]
        return Created(client: client, secret: secret)
    }

    /// The account's clients, oldest first, revoked ones included.
    public static func list(accountID: Int64, on db: isolated PostgresConnection) throws -> [APIClient] {
        try db.query("""
            SELECT \(APIClient.columns) FROM api_clients
            WHERE account_id = $1 ORDER BY created_at, id
            """, [accountID]).map(APIClient.init(row:))
    }

    /// Revokes a client; revoking twice is fine. False when there is no such client.
    public static func revoke(clientID: String, on db: isolated PostgresConnection) throws -> Bool {
        guard UUID(uuidString: clientID) != nil else { return false }
        return try !db.query("""
            UPDATE api_clients SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1::uuid RETURNING 1
            """, [clientID]).isEmpty
    }
}

extension APIClient {
    /// Scopes come space-separated, as OAuth writes them: a scope token holds no space.
    static let columns = "id::text, account_id, name, array_to_string(scopes, ' '), created_at, revoked_at"

    init(row: PostgresRow) throws {
        let scopes: String = try row.decode(3)
        self.init(id: try row.decode(0), accountID: try row.decode(1), name: try row.decode(2),
                  scopes: scopes.split(separator: " ").map(String.init), createdAt: try row.decode(4),
                  revokedAt: try row.decodeOptional(5))
    }
}
