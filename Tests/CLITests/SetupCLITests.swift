import Crypto
import Foundation
import Postgres
import TestPKI
import TestSupport
import Testing

/// Setting up the mirror without SQL: connections, plans, product mappings, customers and account tokens.
/// Bad arguments fail with exit status 2 and one clear line before the database is touched; secrets are
/// stored but never printed; amounts are exact.
@Suite struct SetupCLITests {
    static let appleKey = Result { try PrivateKey.generate(.ecP256) }
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"
    static let unusedDatabase = ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"]

    private static func temporaryFile(_ contents: String) -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-setup-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        return path
    }

    static let keyFile = Result { temporaryFile(try appleKey.get().pem()) }

    private static func appleArguments(account: String = "billing.example.com", environment: String = "Sandbox",
                                       keyFile: String) -> [String] {
        ["connections", "add", "apple", "--account", account, "--bundle-id", "com.example.app", "--environment", environment,
         "--key-id", "ABC123DEFG", "--issuer-id", issuer, "--private-key", keyFile]
    }

    @Test(arguments: [
        (["connections"], "say add, list or show"),
        (["connections", "add"], "say which store to connect: apple or google"),
        (["connections", "add", "google", "--account", "1"], "--package-name is required"),
        (["connections", "add", "amazon"], "unknown store \"amazon\""),
        (["connections", "add", "apple"], "--account is required"),
        (["connections", "add", "apple", "--account", "1"], "--bundle-id is required"),
        (["connections", "add", "apple", "--account", "bad host!", "--bundle-id", "b", "--environment", "Sandbox"],
         "--account must be an account id or host"),
        (["connections", "add", "apple", "--account", "1", "--bundle-id", "b", "--environment", "Staging"],
         "--environment must be Production or Sandbox"),
        (["connections", "add", "apple", "--account", "1", "--bundle-id", "bad id", "--environment", "Sandbox"],
         "--bundle-id must be 1…255 of"),
        (["APPLE", "--environment", "Production"], "--app-apple-id is required for Production"),
        (["APPLE", "--app-apple-id", "-5"], "--app-apple-id must be a positive integer"),
        (["APPLE", "--key-id", "no/slash"], "--key-id must be 1…100 letters and digits"),
        (["APPLE", "--issuer-id", "issuer"], "--issuer-id must be a UUID"),
        (["APPLE", "--private-key-env", "STORESYNC_TEST_NO_SUCH_VARIABLE"], "give --private-key FILE or --private-key-env VAR, not both"),
        (["APPLE", "--private-key", "/nonexistent/key.p8"], "cannot read private key file /nonexistent/key.p8"),
        (["APPLE", "--private-key", "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIGHAgEAMBMGByqGSM49\"}"],
         "cannot read private key file (what looks like key contents, not shown"),
        (["APPLE", "--key-id", "ABC123\r"], "--key-id must be 1…100 letters and digits"),
        (["APPLE", "--key-id", "ABC123\n"], "--key-id must be 1…100 letters and digits"),
        (["APPLE", "--api-base-url", "https://user:secret@api.example.com"], "--api-base-url must not carry a user name or password"),
        (["APPLE", "--environment", "Production", "--app-apple-id", "1", "--api-base-url", "http://api.example.com"],
         "--api-base-url must be https:// for a Production connection"),
        (["APPLE", "--unexpected={\"private_key\": \"-----BEGIN PRIVATE KEY-----\"}"], "unknown option (what looks like key contents"),
        (["APPLE", "--require-issued-tokens", "maybe"], "--require-issued-tokens must be on or off"),
        (["APPLE", "--answer-consumption-requests", "yes"], "--answer-consumption-requests must be on or off"),
        (["APPLE", "--consumption-refund-preference", "REFUND_ALL"], "--consumption-refund-preference must be DECLINE"),
        (["APPLE", "--api-base-url", "ftp://example.com"], "--api-base-url must be an http:// or https:// URL"),
        (["APPLE", "--sandbox-api-base-url", "https://sandbox.example.com"],
         "--sandbox-api-base-url is for Production connections"),
        (["APPLE", "--environment", "Production", "--app-apple-id", "1", "--sandbox-api-base-url", "http://api.example.com"],
         "--sandbox-api-base-url must be https:// for a Production connection"),
        (["APPLE", "--root", "/nonexistent/root.pem"], "cannot read root file /nonexistent/root.pem"),
        (["APPLE", "--root", "/dev/null"], "root file /dev/null holds no readable certificate"),
        (["APPLE", "--bogus"], "unknown option --bogus"),
        (["connections", "show"], "show needs an ID"),
        (["connections", "show", "abc"], "ID must be a positive integer id"),
        (["connections", "list", "extra"], "unexpected argument extra"),
        (["plans", "add", "--account", "1", "--plan", "pro", "--price", "m", "--currency", "USD"], "--amount is required"),
        (["plans", "add", "--account", "1", "--plan", "pro plan", "--price", "m", "--amount", "1", "--currency", "USD"],
         "--plan must be 1…100 of"),
        (["plans", "add", "--account", "1", "--plan", "pro", "--price", "m", "--amount", "1", "--currency", "DOLLAR"],
         "--currency must be a three-letter ISO 4217 code"),
        (["plans", "add", "--account", "1", "--plan", "pro", "--price", "m", "--amount", "1", "--currency", "USD",
          "--period", "monthly"], "--period must be an ISO 8601 period"),
        (["plans", "add", "--account", "1", "--plan", "pro", "--price", "m", "--amount", "1", "--currency", "USD",
          "--period", "P0M"], "--period must be an ISO 8601 period of one unit with a count of 1…999"),
        (["plans", "add", "--account", "1", "--plan", "pro", "--price", "m", "--amount", "1", "--currency", "USD",
          "--period", "P1M1M"], "--period must be an ISO 8601 period"),
        (["plans", "add", "--account", "1", "--plan", "pro", "--price", "m", "--amount", "1", "--currency", "USD",
          "--period", "P1000D"], "--period must be an ISO 8601 period"),
        (["plans", "add", "--account", "1", "--plan", "pro", "--price", "m", "--amount", "1", "--currency", "USD",
          "--entitlement", "a b"], "--entitlement must be 1…100 of"),
        (["plans", "remove"], "unknown action \"remove\"; say add"),
        (["products", "map", "--connection", "1", "--product", "p"], "--plan-price is required"),
        (["products", "map", "--connection", "x", "--product", "p", "--plan-price", "1"], "--connection must be a positive integer id"),
        (["products", "map", "--connection", "1", "--product", "p\u{7}", "--plan-price", "1"], "--product must be 1…255 bytes"),
        (["products", "list"], "--connection is required"),
        (["customers", "add"], "--account is required"),
        (["customers", "add", "--account", "1", "--email", "not-an-address"], "--email must be an address"),
        (["customers", "add", "--account", "1", "--name", "a" + String(repeating: "\u{301}", count: 300)],
         "--name must be at most 200 characters (Unicode code points)"),
        (["customers", "show"], "show needs a CUSTOMER id"),
        (["customers", "show", "42"], "CUSTOMER must be a UUID"),
        (["customers", "list"], "unknown action \"list\"; say add or show"),
        (["tokens", "issue"], "--customer is required"),
        (["tokens", "issue", "--customer", "42"], "--customer must be a UUID"),
        (["tokens", "revoke"], "revoke needs a TOKEN"),
        (["tokens", "revoke", "abc"], "TOKEN must be a UUID"),
        (["tokens", "revoke", "7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e", "--rotate"], "unknown option --rotate"),
    ])
    func badArgumentsExitTwoWithAReason(arguments: [String], message: String) async throws {
        var resolved = arguments
        if resolved.first == "APPLE" {
            // A complete Sandbox connection, so the one option the case adds (or overrides) is what fails.
            resolved = Self.appleArguments(account: "1", keyFile: try Self.keyFile.get()) + resolved.dropFirst()
        }
        let result = try await ChildProcess.run("storesync", resolved, environment: Self.unusedDatabase)
        #expect(result.status == 2, "stdout: \(result.stdout) stderr: \(result.stderr)")
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(!result.stderr.contains("BEGIN PRIVATE KEY"), "a key's contents were echoed: \(result.stderr)")
    }

    @Test func privateKeyMustBeAnAppStoreP256Key() async throws {
        let cases: [(String, String)] = [
            (try PrivateKey.generate(.ecP384).pem(), "holds an EC P-384 key; App Store Server API keys are EC P-256"),
            (try PrivateKey.generate(.rsa(bits: 2048)).pem(), "holds an RSA-2048 key"),
            (try Self.appleKey.get().publicKey.pem(), "is not a PKCS#8 PEM private key"),
            ("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "is not a readable unencrypted PEM private key"),
        ]
        for (pem, message) in cases {
            let file = Self.temporaryFile(pem)
            let result = try await ChildProcess.run("storesync", Self.appleArguments(keyFile: file),
                                                    environment: Self.unusedDatabase)
            #expect(result.status == 2)
            #expect(result.stderr.contains("private key file \(file) \(message)"), "stderr was: \(result.stderr)")
            #expect(!result.stderr.contains("AAAA"))
            let fromEnvironment = try await ChildProcess.run(
                "storesync", Array(Self.appleArguments(keyFile: file).dropLast(2)) + ["--private-key-env", "APPLE_KEY"],
                environment: Self.unusedDatabase.merging(["APPLE_KEY": pem]) { $1 })
            #expect(fromEnvironment.status == 2)
            #expect(fromEnvironment.stderr.contains("environment variable APPLE_KEY \(message)"), "stderr was: \(fromEnvironment.stderr)")
        }
    }

    @Test(arguments: [
        ("9.99", "USD", 999 as Int64?), ("1200", "JPY", 1200), ("1.234", "KWD", 1234), ("0.5", "EUR", 50), ("12", "usd", 1200),
        ("12.5", "BHD", 12_500), ("0", "USD", 0),
        ("9.999", "USD", nil), ("-1", "USD", nil), ("1200.5", "JPY", nil), ("1e3", "USD", nil), (".5", "USD", nil),
        ("9.", "USD", nil), ("1,5", "EUR", nil), ("99999999999999999.99", "USD", nil),
    ])
    func amountsAreReadExactlyInMinorUnits(amount: String, currency: String, minorUnits: Int64?) async throws {
        let arguments = ["plans", "add", "--account", "billing.example.com", "--plan", "pro", "--price", "monthly",
                         "--amount", amount, "--currency", currency, "--json"]
        guard let minorUnits else {
            let result = try await ChildProcess.run("storesync", arguments, environment: Self.unusedDatabase)
            #expect(result.status == 2, "\(amount) \(currency) was accepted: \(result.stdout)")
            #expect(result.stderr.contains("--amount"), "stderr was: \(result.stderr)")
            return
        }
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            #expect(try await ChildProcess.run("storesync", ["accounts", "add", "--host", "billing.example.com"],
                                               environment: env).status == 0)
            let result = try await ChildProcess.run("storesync", arguments, environment: env)
            #expect(result.status == 0, "\(result.stderr)")
            let printed = try jsonObject(result.stdout)
            #expect(printed["amount_minor"] as? Int == Int(minorUnits))
            let stored = try await database.pool.query("SELECT amount_minor, currency FROM plan_prices WHERE id = $1",
                                                       [try #require(printed["id"] as? Int)])
            #expect(try stored[0].decode(0, as: Int64.self) == minorUnits)
            #expect(try stored[0].decode(1, as: String.self) == currency.uppercased())
        }
    }

    @Test func connectionsAreAddedOnceListedAndShownWithoutSecrets() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            let key = try Self.appleKey.get()
            let rootKey = try PrivateKey.generate(.ecP256)
            let root = try CertificateBuilder(commonName: "Simulator Root", notBefore: Date(), notAfter: Date() + 86_400)
                .selfSigned(key: rootKey)
            let rootFile = Self.temporaryFile(root.pem)
            let account = try await ChildProcess.run("storesync", ["accounts", "add", "--host", "billing.example.com", "--json"],
                                                     environment: env)
            let accountID = try #require(try jsonObject(account.stdout)["id"] as? Int)

            let missing = try await ChildProcess.run("storesync", Self.appleArguments(account: "nobody.example.com",
                                                                                      keyFile: try Self.keyFile.get()),
                                                     environment: env)
            #expect(missing.status == 1)
            #expect(missing.stderr == "storesync connections: error: no account for host nobody.example.com\n")

            let sandboxArguments = Self.appleArguments(keyFile: try Self.keyFile.get()) + [
                "--root", rootFile, "--api-base-url", "http://127.0.0.1:9/", "--answer-consumption-requests", "on",
                "--consumption-refund-preference", "GRANT_PRORATED", "--json",
            ]
            let sandbox = try await ChildProcess.run("storesync", sandboxArguments, environment: env)
            #expect(sandbox.status == 0, "\(sandbox.stderr)")
            let sandboxJSON = try jsonObject(sandbox.stdout)
            let sandboxID = try #require(sandboxJSON["id"] as? Int)
            // Created after 2026-10-28 without the option: only issued tokens link.
            #expect(sandboxJSON["require_issued_tokens"] as? Bool == true)

            let again = try await ChildProcess.run("storesync", sandboxArguments, environment: env)
            #expect(again.status == 1)
            #expect(again.stderr == "storesync connections: error: account \(accountID) already has a Sandbox apple connection "
                + "for com.example.app\n")

            var productionArguments = Self.appleArguments(account: String(accountID), environment: "production",
                                                          keyFile: "unused").dropLast(2)
            productionArguments += ["--private-key-env", "APPLE_KEY", "--app-apple-id", "1234567890",
                                    "--require-issued-tokens", "off"]
            let production = try await ChildProcess.run("storesync", Array(productionArguments),
                                                        environment: env.merging(["APPLE_KEY": try key.pem()]) { $1 })
            #expect(production.status == 0, "\(production.stderr)")
            #expect(production.stdout.hasPrefix("connection "))
            #expect(!production.stdout.contains("PRIVATE KEY"))

            let stored = try await database.pool.query("""
                SELECT environment, app_apple_id, require_issued_tokens, api_private_key, trusted_roots_pem, api_base_url,
                       answer_consumption_requests, consumption_refund_preference, api_issuer_id
                FROM store_connections ORDER BY id
                """)
            #expect(stored.count == 2)
            #expect(try stored[0].decode(0, as: String.self) == "Sandbox")
            #expect(try stored[0].decodeOptional(1, as: Int64.self) == nil)
            #expect(try stored[0].decode(4, as: String.self) == root.pem)
            #expect(try stored[0].decode(5, as: String.self) == "http://127.0.0.1:9")
            #expect(try stored[0].decode(6, as: Bool.self))
            #expect(try stored[0].decode(7, as: String.self) == "GRANT_PRORATED")
            #expect(try stored[0].decode(8, as: String.self) == Self.issuer)
            #expect(try stored[1].decode(0, as: String.self) == "Production")
            #expect(try stored[1].decode(1, as: Int64.self) == 1_234_567_890)
            #expect(try stored[1].decode(2, as: Bool.self) == false)
            for row in stored {
                // The stored key is the same key, usable for signing the API's JWTs.
                let storedKey = try PrivateKey(pem: try row.decode(3, as: String.self))
                #expect(try storedKey.publicKey.pem() == key.publicKey.pem())
            }

            let list = try await ChildProcess.run("storesync", ["connections", "list"], environment: env)
            #expect(list.status == 0)
            let lines = list.stdout.split(separator: "\n")
            #expect(lines.count == 3)
            #expect(lines[0].hasPrefix("ID  ACCOUNT  STORE  APP"))
            #expect(lines[1].contains("com.example.app  Sandbox"))
            #expect(lines[1].contains("issued-tokens-only,answers-consumption(GRANT_PRORATED),api-key,custom-api,custom-roots"))
            #expect(lines[2].contains("Production") && lines[2].hasSuffix("  api-key"))

            let show = try await ChildProcess.run("storesync", ["connections", "show", String(sandboxID)], environment: env)
            #expect(show.status == 0, "\(show.stderr)")
            let shown = try jsonObject(show.stdout)
            #expect(shown["api_private_key"] as? String == "(set)")
            #expect(shown["api_key_id"] as? String == "ABC123DEFG")
            #expect(shown["trusted_roots"] as? [String] == [root.subject])
            let secretBody = try key.pem().split(separator: "\n")[1]
            #expect(!show.stdout.contains("PRIVATE KEY") && !show.stdout.contains(secretBody))
            let listJSON = try await ChildProcess.run("storesync", ["connections", "list", "--json"], environment: env)
            #expect(listJSON.stdout.contains("\"api_private_key\":\"(set)\""))
            #expect(!listJSON.stdout.contains(secretBody))

            let none = try await ChildProcess.run("storesync", ["connections", "show", "999"], environment: env)
            #expect(none.status == 1)
            #expect(none.stderr == "storesync connections: error: no connection 999\n")
        }
    }

    @Test func setupFromAccountToRevokedToken() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
                try await ChildProcess.run("storesync", arguments, environment: env)
            }
            #expect(try await run(["accounts", "add", "--host", "billing.example.com"]).status == 0)
            #expect(try await run(["accounts", "add", "--host", "other.example.com"]).status == 0)
            let connection = try await run(Self.appleArguments(keyFile: try Self.keyFile.get()) + ["--json"])
            let connectionID = String(try #require(try jsonObject(connection.stdout)["id"] as? Int))

            let plan = try await run(["plans", "add", "--account", "billing.example.com", "--plan", "pro", "--price", "monthly",
                                      "--amount", "9.99", "--currency", "USD", "--entitlement", "pro", "--entitlement", "sync"])
            #expect(plan.status == 0, "\(plan.stderr)")
            #expect(plan.stdout.hasSuffix(": pro/monthly 9.99 USD every P1M\n"), "\(plan.stdout)")
            let priceID = try #require(try await database.pool.query("SELECT id FROM plan_prices").first?.decode(0, as: Int64.self))
            let granted = try await database.pool.query("""
                SELECT e.key FROM plan_entitlements pe JOIN entitlements e ON e.id = pe.entitlement_id ORDER BY e.key
                """)
            #expect(try granted.map { try $0.decode(0, as: String.self) } == ["pro", "sync"])
            let foreign = try await run(["plans", "add", "--account", "other.example.com", "--plan", "basic", "--price", "yearly",
                                         "--amount", "1200", "--currency", "JPY", "--period", "P1Y", "--json"])
            let foreignPriceID = String(try #require(try jsonObject(foreign.stdout)["id"] as? Int))

            let empty = try await run(["products", "list", "--connection", connectionID])
            #expect(empty.stdout == "no products mapped on connection \(connectionID)\n")
            let mapped = try await run(["products", "map", "--connection", connectionID, "--product", "com.example.pro.monthly",
                                        "--plan-price", String(priceID)])
            #expect(mapped.status == 0, "\(mapped.stderr)")
            #expect(mapped.stdout == "product com.example.pro.monthly on connection \(connectionID) maps to plan price \(priceID)\n")
            let otherAccount = try await run(["products", "map", "--connection", connectionID, "--product", "x",
                                              "--plan-price", foreignPriceID])
            #expect(otherAccount.status == 1)
            #expect(otherAccount.stderr.contains("no connection \(connectionID) with a plan price \(foreignPriceID) in its account"))
            let basePlan = try await run(["products", "map", "--connection", connectionID, "--product", "x", "--base-plan", "b",
                                          "--plan-price", String(priceID)])
            #expect(basePlan.status == 1)
            #expect(basePlan.stderr.contains("--base-plan is for Google Play"))
            let noConnection = try await run(["products", "list", "--connection", "999"])
            #expect(noConnection.status == 1)
            #expect(noConnection.stderr == "storesync products: error: no connection 999\n")
            let products = try await run(["products", "list", "--connection", connectionID])
            #expect(products.stdout.split(separator: "\n").last?.hasPrefix("com.example.pro.monthly  -") == true, "\(products.stdout)")
            #expect(products.stdout.contains("pro   monthly  9.99 USD  P1M"), "\(products.stdout)")
            let productsJSON = try await run(["products", "list", "--connection", connectionID, "--json"])
            #expect(productsJSON.stdout.contains(#""product":"com.example.pro.monthly","base_plan":null"#))
            #expect(productsJSON.stdout.contains(#""amount_minor":999,"currency":"USD""#))

            let customer = try await run(["customers", "add", "--account", "billing.example.com", "--email", "ann@example.com",
                                          "--name", "Ann", "--json"])
            #expect(customer.status == 0, "\(customer.stderr)")
            let customerID = try #require(try jsonObject(customer.stdout)["id"] as? String)
            #expect(UUID(uuidString: customerID) != nil)

            let webID: Int64 = try await database.pool.query("""
                INSERT INTO customer_subscriptions (account_id, customer_id, plan_price_id, source, status)
                SELECT account_id, id, $2, 'web', 'active' FROM customers WHERE id = $1::uuid RETURNING id
                """, [customerID, priceID])[0].decode(0)
            let shown = try await run(["customers", "show", customerID.uppercased()])
            #expect(shown.status == 0, "\(shown.stderr)")
            let summary = try jsonObject(shown.stdout)
            #expect(summary["id"] as? String == customerID && summary["email"] as? String == "ann@example.com")
            let subscriptions = try #require(summary["subscriptions"] as? [[String: Any]])
            #expect(subscriptions.map { $0["id"] as? Int } == [Int(webID)])
            #expect(subscriptions.first?["plan"] as? String == "pro" && subscriptions.first?["amount_minor"] as? Int == 999)
            let entitlements = try #require(summary["entitlements"] as? [[String: Any]])
            #expect(entitlements.map { $0["key"] as? String } == ["pro", "sync"])
            #expect(entitlements.allSatisfy { $0["source"] as? String == "web" && $0["expires_at"] is NSNull })
            let nobody = try await run(["customers", "show", "7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e"])
            #expect(nobody.status == 1)
            #expect(nobody.stderr == "storesync customers: error: no customer 7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e\n")

            let issued = try jsonObject(try await run(["tokens", "issue", "--customer", customerID]).stdout)
            let token = try #require(issued["account_token"] as? String)
            let secret = try #require(issued["client_secret"] as? String)
            #expect(issued["reused"] as? Bool == false)
            let hash = try await database.pool.query("SELECT secret_sha256, status FROM account_tokens WHERE token = $1::uuid",
                                                     [token])
            #expect(try hash[0].decode(0, as: Data.self) == Digest.sha256(Data(secret.utf8)))

            let reused = try await run(["tokens", "issue", "--customer", customerID])
            #expect(reused.stdout == #"{"account_token":"\#(token)","client_secret":null,"reused":true}"# + "\n")

            let rotated = try jsonObject(try await run(["tokens", "issue", "--customer", customerID, "--rotate"]).stdout)
            let newToken = try #require(rotated["account_token"] as? String)
            #expect(newToken != token)
            #expect(rotated["reused"] as? Bool == false)
            #expect((rotated["client_secret"] as? String).map { $0 != secret && $0.count == 48 } == true)

            let revoke = try await run(["tokens", "revoke", newToken.uppercased()])
            #expect(revoke.status == 0, "\(revoke.stderr)")
            #expect(revoke.stdout == "account token \(newToken) revoked\n")
            #expect(try await run(["tokens", "revoke", newToken]).status == 0)
            let statuses = try await database.pool.query("SELECT token::text, status FROM account_tokens ORDER BY created_at")
            #expect(try statuses.map { try $0.decode(0, as: String.self) } == [token, newToken])
            #expect(try statuses.map { try $0.decode(1, as: String.self) } == ["revoked", "revoked"])

            let unknownToken = try await run(["tokens", "revoke", "7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e"])
            #expect(unknownToken.status == 1)
            #expect(unknownToken.stderr == "storesync tokens: error: no account token 7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e\n")
            let unknownCustomer = try await run(["tokens", "issue", "--customer", "7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e"])
            #expect(unknownCustomer.status == 1)
            #expect(unknownCustomer.stderr == "storesync tokens: error: no customer 7f8c1c55-5a4b-4f7e-9b8e-0d3c2a1b0f9e\n")
        }
    }

    @Test func helpIsAvailableForEverySetupCommand() async throws {
        for command in ["connections", "plans", "products", "customers", "tokens", "api-clients"] {
            let result = try await ChildProcess.run("storesync", [command, "--help"])
            #expect(result.status == 0)
            #expect(result.stdout.contains("usage: storesync \(command)"))
        }
    }
}
