import Crypto
import Foundation
import Postgres
import TestSupport
import Testing

/// `storesync connections add google`: the service-account key is checked and kept, never printed; the push
/// authentication settings are required.
@Suite struct GoogleConnectionCLITests {
    static let unusedDatabase = ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"]

    private static func temporaryFile(_ contents: String) -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-google-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        return path
    }

    private static func keyJSON(_ key: PrivateKey, email: String = "play@project.iam.gserviceaccount.com") throws -> String {
        let object: [String: Any] = ["type": "service_account", "client_email": email, "private_key": try key.pem(),
                                     "token_uri": "http://127.0.0.1:9/token"]
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static let keyFile = Result { temporaryFile(try keyJSON(try PrivateKey.generate(.rsa(bits: 2048)))) }

    private static func arguments(account: String = "1", keyFile: String) -> [String] {
        ["connections", "add", "google", "--account", account, "--package-name", "com.example.app", "--environment",
         "Production", "--service-account-key", keyFile, "--push-audience", "https://billing.example.com/webhook/google-play",
         "--push-service-account", "push@project.iam.gserviceaccount.com"]
    }

    @Test(arguments: [
        (["--push-audience", ""], "--push-audience must be 1…2000 bytes"),
        (["--push-audience", "https://billing.example.com/webhook\n"], "--push-audience must be 1…2000 bytes of printable ASCII"),
        (["--push-service-account", "nobody"], "--push-service-account must be an e-mail address"),
        (["--api-base-url", "mailto:x"], "--api-base-url must be an http:// or https:// URL"),
        (["--jwks-url", "ftp://x"], "--jwks-url must be an http:// or https:// URL"),
        (["--token-uri", "x"], "--token-uri must be an http:// or https:// URL"),
        (["--service-account-key-env", "X"], "give --service-account-key FILE or --service-account-key-env VAR, not both"),
        (["--service-account-key", "/nonexistent.json"], "cannot read service-account key file /nonexistent.json"),
        (["--package-name", "com.example-app"], "this connection could not call Google: package name \"com.example-app\""),
        (["--api-base-url", "http://play.example.com"], "--api-base-url must be https:// for a Production connection"),
        (["--token-uri", "https://user:secret@oauth.example.com/token"], "--token-uri must not carry a user name or password"),
        (["--app-apple-id", "5"], "unknown option --app-apple-id"),
    ])
    func badArgumentsExitTwoWithAReason(extra: [String], message: String) async throws {
        let result = try await ChildProcess.run("storesync", Self.arguments(keyFile: try Self.keyFile.get()) + extra,
                                                environment: Self.unusedDatabase)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func theKeyMustBeAServiceAccountRSAKey() async throws {
        let cases: [(String, String)] = [
            ("not json", "is not a JSON object"),
            (#"{"client_email": "a@b.c"}"#, "lacks client_email or private_key"),
            (try Self.keyJSON(try PrivateKey.generate(.ecP256)), "private_key holds an EC P-256 key; service-account keys are RSA"),
            (try Self.keyJSON(try PrivateKey.generate(.rsa(bits: 2048)), email: "not-an-email"), "client_email must be an e-mail"),
            (try Self.keyJSON(try PrivateKey.generate(.rsa(bits: 1024))), "a service-account key is RSA of 2048 to 4096 bits"),
        ]
        for (contents, message) in cases {
            let result = try await ChildProcess.run("storesync", Self.arguments(keyFile: Self.temporaryFile(contents)),
                                                    environment: Self.unusedDatabase)
            #expect(result.status == 2)
            #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
            #expect(!result.stderr.contains("PRIVATE KEY"))
        }
    }

    @Test func aGoogleConnectionIsStoredAndShownWithoutItsKey() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            _ = try await ChildProcess.run("storesync", ["accounts", "add", "--host", "billing.example.com"], environment: env)
            let added = try await ChildProcess.run(
                "storesync", Self.arguments(account: "billing.example.com", keyFile: try Self.keyFile.get())
                    + ["--jwks-url", "http://127.0.0.1:9/certs", "--json"], environment: env)
            #expect(added.status == 0, "\(added.stderr)")
            let row = try #require(try await database.pool.query("""
                SELECT store, app_identifier, api_client_email, api_token_uri, push_audience, push_service_account,
                       push_jwks_url, api_private_key LIKE '-----BEGIN PRIVATE KEY-----%'
                FROM store_connections
                """).first)
            #expect(try row.decode(0, as: String.self) == "google")
            #expect(try row.decode(2, as: String.self) == "play@project.iam.gserviceaccount.com")
            #expect(try row.decode(3, as: String.self) == "http://127.0.0.1:9/token")
            #expect(try row.decode(4, as: String.self) == "https://billing.example.com/webhook/google-play")
            #expect(try row.decode(5, as: String.self) == "push@project.iam.gserviceaccount.com")
            #expect(try row.decode(6, as: String.self) == "http://127.0.0.1:9/certs")
            #expect(try row.decode(7, as: Bool.self))
            let shown = try await ChildProcess.run("storesync", ["connections", "show", "1"], environment: env)
            #expect(shown.status == 0)
            #expect(shown.stdout.contains(#""api_private_key":"(set)""#), "\(shown.stdout)")
            #expect(!shown.stdout.contains("BEGIN"))
        }
    }

    /// Every Play purchase names its base plan and matching is exact on it: a mapping without one would
    /// never match, so it is refused.
    @Test func aGoogleProductIsMappedOnlyWithItsBasePlan() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            _ = try await ChildProcess.run("storesync", ["accounts", "add", "--host", "billing.example.com"], environment: env)
            let added = try await ChildProcess.run("storesync", Self.arguments(keyFile: try Self.keyFile.get()), environment: env)
            #expect(added.status == 0, "\(added.stderr)")
            let plan = try await ChildProcess.run("storesync", ["plans", "add", "--account", "1", "--plan", "pro", "--price", "monthly",
                                                                "--amount", "9.99", "--currency", "USD", "--json"], environment: env)
            #expect(plan.status == 0, "\(plan.stderr)")
            let map = ["products", "map", "--connection", "1", "--product", "premium", "--plan-price", "1"]
            let without = try await ChildProcess.run("storesync", map, environment: env)
            #expect(without.status == 1)
            #expect(without.stderr.contains("--base-plan is required: connection 1 is a Google Play connection"),
                    "stderr was: \(without.stderr)")
            let with = try await ChildProcess.run("storesync", map + ["--base-plan", "monthly", "--json"], environment: env)
            #expect(with.status == 0, "\(with.stderr)")
            #expect(with.stdout == #"{"connection_id":1,"product":"premium","base_plan":"monthly","plan_price_id":1}"# + "\n")
            let stored = try await database.pool.query("SELECT store_product_id, base_plan_id FROM product_mappings")
            #expect(try stored.map { [try $0.decode(0, as: String.self), try $0.decode(1, as: String.self)] } == [["premium", "monthly"]])
        }
    }
}
