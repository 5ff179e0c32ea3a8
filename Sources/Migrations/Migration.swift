/// One numbered schema change from `sql/`, compiled into the binary.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    init(version: Int, name: String, bytes: [UInt8]) {
        self.init(version: version, name: name, sql: String(decoding: bytes, as: UTF8.self))
    }

    /// The file name in `sql/`, Flyway style: `V0001__queue.sql`.
    public var fileName: String {
        let digits = String(version)
        return "V" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "__\(name).sql"
    }
}

extension Migration {
    /// Every migration this build knows, in order. A test checks this list against `sql/`.
    public static let all: [Migration] = [
        Migration(version: 1, name: "queue", bytes: PackageResources.V0001__queue_sql),
        Migration(version: 2, name: "accounts", bytes: PackageResources.V0002__accounts_sql),
        Migration(version: 3, name: "mirror", bytes: PackageResources.V0003__mirror_sql),
        Migration(version: 4, name: "google", bytes: PackageResources.V0004__google_sql),
        Migration(version: 5, name: "resync", bytes: PackageResources.V0005__resync_sql),
        Migration(version: 6, name: "body_compression", bytes: PackageResources.V0006__body_compression_sql),
        Migration(version: 7, name: "purchase_updates", bytes: PackageResources.V0007__purchase_updates_sql),
        Migration(version: 8, name: "token_acknowledgements", bytes: PackageResources.V0008__token_acknowledgements_sql),
        Migration(version: 9, name: "receipt_scope", bytes: PackageResources.V0009__receipt_scope_sql),
        Migration(version: 10, name: "lease_by_priority", bytes: PackageResources.V0010__lease_by_priority_sql),
        Migration(version: 11, name: "worker_column_grants", bytes: PackageResources.V0011__worker_column_grants_sql),
        Migration(version: 12, name: "account_token_integrity", bytes: PackageResources.V0012__account_token_integrity_sql),
        Migration(version: 13, name: "ingest_connection_trust", bytes: PackageResources.V0013__ingest_connection_trust_sql),
        Migration(version: 14, name: "connection_settings_revision",
                  bytes: PackageResources.V0014__connection_settings_revision_sql),
        Migration(version: 15, name: "api_clients", bytes: PackageResources.V0015__api_clients_sql),
        Migration(version: 16, name: "mobile_stores_api", bytes: PackageResources.V0016__mobile_stores_api_sql),
        Migration(version: 17, name: "mobile_stores_app", bytes: PackageResources.V0017__mobile_stores_app_sql),
        Migration(version: 18, name: "console", bytes: PackageResources.V0018__console_sql),
        Migration(version: 19, name: "invoices_latest_by_purchase",
                  bytes: PackageResources.V0019__invoices_latest_by_purchase_sql),
    ]
}
