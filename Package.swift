// swift-tools-version:6.0
import PackageDescription

/// Every numbered migration in `sql/`, compiled into the binary so a deployed `storesync` always carries
/// exactly the schema it was built for. Listed by name (SwiftPM caches this manifest, so a directory listing
/// here would miss new files); `Migration.all` names them too, and a test checks both against `sql/`.
let migrationFiles: [Resource] = ["V0001__queue.sql", "V0002__accounts.sql", "V0003__mirror.sql",
                                    "V0004__google.sql", "V0005__resync.sql",
                                    "V0006__body_compression.sql", "V0007__purchase_updates.sql",
                                    "V0008__token_acknowledgements.sql", "V0009__receipt_scope.sql",
                                    "V0010__lease_by_priority.sql",
                                    "V0011__worker_column_grants.sql",
                                    "V0012__account_token_integrity.sql",
                                    "V0013__ingest_connection_trust.sql",
                                    "V0014__connection_settings_revision.sql", "V0015__api_clients.sql",
                                    "V0016__mobile_stores_api.sql", "V0017__mobile_stores_app.sql",
                                    "V0018__console.sql",
                                    "V0019__invoices_latest_by_purchase.sql"].map { .embedInCode("sql/\($0)") }

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

func system(_ name: String, _ pkgConfig: String, _ apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "StoreSync",
    products: [
        .executable(name: "storesync", targets: ["storesync"]),
        .executable(name: "storesync-dev", targets: ["storesync-dev"]),
        // For the separate Tests/FuzzTesting/ package: Crypto and App Store verification with the test PKI, and
        // the strict JSON reader alone.
        .library(name: "StoreSyncCrypto", targets: ["Crypto", "AppStore", "TestPKI"]),
        .library(name: "StoreSyncStrictJSON", targets: ["StrictJSON"]),
        .library(name: "StoreSyncAPI", targets: ["API"]),
    ],
    targets: [
        // C libraries from Debian, one system target each.
        system("CPostgres", "libpq", "libpq-dev"),
        system("COpenSSL", "openssl", "libssl-dev"),
        system("CCurl", "libcurl", "libcurl4-openssl-dev"),
        system("CMicroHTTPD", "libmicrohttpd", "libmicrohttpd-dev"),
        system("CSystemd", "libsystemd", "libsystemd-dev"),
        // Wrappers for variadic functions and macros the Swift importer drops.
        .target(name: "CStoreSyncShims", dependencies: ["COpenSSL", "CCurl", "CMicroHTTPD"],
                cSettings: [.define("_GNU_SOURCE")]),

        // Adapters: the only modules that import C.
        .target(name: "Postgres", dependencies: ["CPostgres", "CStoreSyncShims", "Logging"], swiftSettings: strict),
        .target(name: "Systemd", dependencies: ["CSystemd"], swiftSettings: strict),
        .target(name: "Crypto", dependencies: ["COpenSSL", "CStoreSyncShims", "StrictJSON"], swiftSettings: strict),
        .target(name: "HTTP", dependencies: ["CCurl", "CMicroHTTPD", "CStoreSyncShims", "Logging"],
                swiftSettings: strict),

        // Shared plumbing with no C and no I/O beyond stderr.
        .target(name: "Logging", swiftSettings: strict),
        .target(name: "Metrics", swiftSettings: strict),
        // The strict RFC 8259 reader every App Store payload and API answer is decoded with.
        .target(name: "StrictJSON", swiftSettings: strict),

        // Domain. StoreModel holds the values the stores and the mirror exchange; it has no I/O.
        .target(name: "StoreModel", swiftSettings: strict),
        // Tenancy: accounts, store connections and their credentials, plans, prices, entitlements, product
        // mappings, customers and account tokens.
        .target(name: "Accounts", dependencies: ["StoreModel", "Postgres"], swiftSettings: strict),
        .target(name: "Mirror", dependencies: ["Accounts", "StoreModel", "Postgres", "Logging"], swiftSettings: strict),
        .target(name: "Migrations", dependencies: ["Postgres"], resources: migrationFiles, swiftSettings: strict),
        .target(name: "Queue", dependencies: ["Postgres", "Logging"], swiftSettings: strict),
        // The jobs Ingest writes and Sync runs, so that neither service imports the other.
        .target(name: "IngestJobs", dependencies: ["Queue"], swiftSettings: strict),
        .target(name: "AppStore", dependencies: ["Crypto", "HTTP", "StoreModel", "StrictJSON"],
                resources: [.embedInCode("AppleRootCA-G3.cer")], swiftSettings: strict),
        .target(name: "GooglePlay", dependencies: ["Crypto", "HTTP", "StoreModel", "Logging", "StrictJSON"],
                swiftSettings: strict),

        // Services.
        .target(name: "Worker", dependencies: ["Queue", "Accounts", "Postgres", "Logging"], swiftSettings: strict),
        .target(name: "Ingest", dependencies: ["HTTP", "Metrics", "Postgres", "Logging", "Crypto", "AppStore", "GooglePlay",
                                               "Accounts", "StoreModel", "Queue", "IngestJobs"],
                swiftSettings: strict),
        .target(name: "Sync", dependencies: ["Worker", "Queue", "IngestJobs", "Accounts", "Mirror", "AppStore", "GooglePlay", "StoreModel", "Crypto", "HTTP",
                                             "Metrics", "Postgres", "Logging"], swiftSettings: strict),
        .target(name: "Operations", dependencies: ["HTTP", "Metrics", "Migrations", "Postgres", "Queue", "Worker", "Logging"],
                swiftSettings: strict),

        // Faces.
        // The Mobile Stores API: OAuth client credentials, account tokens, purchase registration, entitlements.
        .target(name: "API", dependencies: ["Accounts", "Mirror", "Sync", "HTTP", "Crypto", "Postgres", "Logging",
                                            "Metrics", "StoreModel", "StrictJSON"],
                resources: [.embedInCode("openapi.json")], swiftSettings: strict),
        // The on-call console: dead letters, purchases' stories and queue health as server-rendered pages.
        .target(name: "Console", dependencies: ["Accounts", "AppStore", "GooglePlay", "Crypto", "HTTP", "Ingest", "IngestJobs",
                                                "Logging", "Mirror", "Postgres", "Queue", "StoreModel", "Sync"],
                swiftSettings: strict),
        .target(name: "CLI", dependencies: ["Console", "Worker", "Sync", "Queue", "Migrations", "Postgres", "Logging", "Systemd", "AppStore",
                                            "Crypto", "GooglePlay", "HTTP", "Metrics", "Ingest", "Operations", "Accounts", "API",
                                            "Mirror", "StoreModel"],
                swiftSettings: strict),
        .executableTarget(name: "storesync", dependencies: ["CLI"], swiftSettings: strict),

        // Dev tooling, never linked into `storesync`. TestPKI is an adapter (it imports OpenSSL to issue
        // certificates): an Apple-shaped PKI for the simulator, the benchmarks and the tests.
        .target(name: "TestPKI", dependencies: ["COpenSSL", "CStoreSyncShims", "Crypto", "AppStore"], swiftSettings: strict),
        // A local App Store and Google Play: signed answers and notifications from a scenario, for tests,
        // benchmarks and demos.
        .target(name: "Simulator", dependencies: ["AppStore", "GooglePlay", "Crypto", "HTTP", "StoreModel", "Logging",
                                                  "TestPKI"],
                swiftSettings: strict),
        // `storesync-dev`: the simulators, the demo, the benchmarks and the chaos run, on CLI's command plumbing.
        .target(name: "DevTools", dependencies: ["API", "Accounts", "CLI", "Console", "Simulator", "TestPKI", "AppStore", "Crypto", "GooglePlay", "HTTP",
                                                 "Ingest", "Logging", "Metrics", "Migrations", "Mirror", "Postgres", "Queue",
                                                 "StoreModel", "Sync", "Worker"],
                swiftSettings: strict),
        .executableTarget(name: "storesync-dev", dependencies: ["DevTools"], swiftSettings: strict),

        // Test support: a database per test, a worker process with test-only job kinds.
        .target(name: "TestSupport", dependencies: ["Postgres", "Migrations", "Queue", "Worker", "HTTP", "CStoreSyncShims",
                                                    "Accounts", "Crypto", "StoreModel"],
                path: "Tests/TestSupport", swiftSettings: strict),
        .executableTarget(name: "storesync-testworker",
                          dependencies: ["TestSupport", "Worker", "Queue", "Logging", "Postgres", "CLI"],
                          path: "Tests/TestWorker", swiftSettings: strict),
        .testTarget(name: "StoreModelTests", dependencies: ["StoreModel"], swiftSettings: strict),
        .testTarget(name: "PipelineTests", dependencies: ["API", "Console", "Accounts", "Sync", "Simulator", "TestPKI", "Ingest", "IngestJobs", "Worker", "Mirror", "StoreModel",
                                                         "AppStore", "Crypto", "HTTP", "Metrics", "Postgres", "Queue",
                                                         "TestSupport", "storesync", "GooglePlay", "Operations", "Logging"], swiftSettings: strict),
        // The console's parts that need no database: HTML escaping, the credentials file, CSRF tokens.
        .testTarget(name: "ConsoleTests", dependencies: ["Console", "Crypto"], swiftSettings: strict),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "StrictJSON", "TestPKI"], swiftSettings: strict),
        .testTarget(name: "StrictJSONTests", dependencies: ["StrictJSON"], swiftSettings: strict),
        .testTarget(name: "AppStoreTests", dependencies: ["AppStore", "Crypto", "HTTP", "StoreModel", "StrictJSON", "TestPKI",
                                                         "TestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "GooglePlayTests", dependencies: ["GooglePlay", "Crypto", "HTTP", "StoreModel", "StrictJSON",
                                                           "TestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "SimulatorTests", dependencies: ["Accounts", "Simulator", "TestPKI", "AppStore", "GooglePlay", "Crypto",
                                                         "HTTP", "TestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Crypto", "TestPKI", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics"], swiftSettings: strict),
        .testTarget(name: "LoggingTests", dependencies: ["Logging"], swiftSettings: strict),
        .testTarget(name: "IngestTests", dependencies: ["Accounts", "Ingest", "Operations", "HTTP", "Metrics", "Postgres",
                                                       "TestSupport", "AppStore", "Crypto", "GooglePlay", "Mirror", "TestPKI",
                                                       "Queue", "IngestJobs"],
                    swiftSettings: strict),
        .testTarget(name: "AccountsTests", dependencies: ["Accounts", "StoreModel", "Postgres", "TestSupport", "Crypto"],
                    swiftSettings: strict),
        .testTarget(name: "APITests", dependencies: ["API", "Accounts", "AppStore", "Crypto", "HTTP", "Metrics", "Mirror",
                                                    "Postgres", "Simulator", "StoreModel", "Sync", "TestPKI", "TestSupport",
                                                    "storesync"],
                    swiftSettings: strict),
        .testTarget(name: "MirrorTests", dependencies: ["Accounts", "Mirror", "StoreModel", "Postgres", "TestSupport", "Crypto"],
                    swiftSettings: strict),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "QueueTests", dependencies: ["Queue", "Worker", "Migrations", "TestSupport", "storesync",
                                                      "storesync-testworker"],
                    swiftSettings: strict),
        // Both executables as a user runs them (the dependencies build them next to the test bundle).
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "TestPKI", "storesync", "storesync-dev", "AppStore",
                                                    "GooglePlay", "Crypto", "HTTP", "Postgres", "Queue", "Console"],
                    swiftSettings: strict),
    ]
)
