import Accounts
import Console
import Crypto
import Foundation
import HTTP
import Postgres
import TestPKI
import TestSupport
import Testing

/// Who may use the console and what it lets out: on loopback whoever reaches the port is the local operator; with
/// credentials every request signs in with HTTP Basic, failures are limited per address, and actions are
/// recorded under the name signed in with. Every page carries headers that keep it from being framed, sniffed or
/// cached, and no page ever shows a private key, a push's bearer token or an account token's secret.
@Suite struct ConsoleAccessTests {
    @Test func onLoopbackWithoutCredentialsTheLocalOperatorActs() async throws {
        try await TestDatabase.with { database in
            try await SyntheticDeadLetter.insert([.resync(id: 700_001, connectionID: 1, lineage: "L1")], into: database)
            try await ConsoleHarness.with(database) { console in
                let queue = try await console.get("/")
                #expect(queue.status == 200)
                #expect(queue.text.contains(#"<span class="who">\#(ConsoleHarness.localOperator)</span>"#))
                #expect(try await console.get("/", headers: [("Authorization", "Basic bm9ib2R5Ondyb25n")]).status == 200)
                #expect(try await console.confirm("/dead-letters/700001/discard", []).status == 303)
                #expect(try await ConsoleDeadLetterTests.actions(database).map(\.operatorName) == [ConsoleHarness.localOperator])
            }
        }
    }

    @Test func withCredentialsOnlyAnOperatorsNameAndPasswordGetIn() async throws {
        try await TestDatabase.with { database in
            try await SyntheticDeadLetter.insert([.resync(id: 700_001, connectionID: 1, lineage: "L1")], into: database)
            let credentials = try OperatorCredentials.twoOperators()
            try await ConsoleHarness.with(database, credentials: credentials.file) { console in
                let refusals = [
                    ("no credentials", try await console.get("/dead-letters")),
                    ("a wrong password", try await console.signedIn(as: "alice", password: "wrong password").get("/dead-letters")),
                    ("an unknown operator", try await console.signedIn(as: "carol", password: credentials.password).get("/")),
                    ("another scheme", try await console.get("/", headers: [("Authorization", "Bearer abc")])),
                    ("no password", try await console.get("/", headers: [("Authorization", "Basic YWxpY2U=")])),
                ]
                for (what, answer) in refusals {
                    #expect(answer.status == 401, "\(what)")
                    #expect(answer.header("www-authenticate")?.hasPrefix("Basic realm=") == true, "\(what)")
                    #expect(answer.header("cache-control") == "no-store", "\(what)")
                    #expect(!answer.text.contains("<html"), "\(what)")
                }
                // A form posted without credentials is refused before anything else is looked at.
                #expect(try await console.post("/dead-letters/700001/discard", [("confirmed", "yes")]).status == 401)

                let alice = console.signedIn(as: "alice", password: credentials.password)
                let page = try await alice.get("/dead-letters")
                #expect(page.status == 200)
                #expect(page.text.contains(#"<span class="who">alice</span>"#))
                #expect(try await alice.confirm("/dead-letters/700001/discard", []).status == 303)
                #expect(try await ConsoleDeadLetterTests.actions(database).map(\.operatorName) == ["alice"])
            }
        }
    }

    /// Ten failed sign-ins from one address in a minute, and that address is refused even the right password.
    @Test func tenFailuresFromOneAddressAreTooMany() async throws {
        try await TestDatabase.with { database in
            let credentials = try OperatorCredentials.twoOperators()
            try await ConsoleHarness.with(database, credentials: credentials.file) { console in
                let wrong = console.signedIn(as: "alice", password: "not the password")
                for attempt in 1...10 {
                    #expect(try await wrong.get("/").status == 401, "attempt \(attempt)")
                }
                let limited = try await console.signedIn(as: "alice", password: credentials.password).get("/")
                #expect(limited.status == 429)
                #expect(limited.header("retry-after") == "60")
            }
        }
    }

    /// An operator who signed in stays in while a guesser uses up the address they share (a proxy's, say).
    @Test func aRememberedLoginOutlastsAGuesserOnTheSameAddress() async throws {
        try await TestDatabase.with { database in
            let credentials = try OperatorCredentials.twoOperators()
            try await ConsoleHarness.with(database, credentials: credentials.file) { console in
                let alice = console.signedIn(as: "alice", password: credentials.password)
                #expect(try await alice.get("/").status == 200)
                let guesser = console.signedIn(as: "alice", password: "a guess")
                for _ in 1...10 { _ = try await guesser.get("/") }
                #expect(try await guesser.get("/").status == 429)
                #expect(try await alice.get("/dead-letters").status == 200)
            }
        }
    }

    /// Without credentials the console answers only to a loopback name: a page elsewhere whose name resolves to
    /// 127.0.0.1 (DNS rebinding) cannot read it or post to it.
    @Test(arguments: [("evil.test:8090", 421), ("127.0.0.1.evil.test", 421), ("[::2]:8090", 421), ("localhost:9000", 200),
                      ("LOCALHOST", 200), ("127.0.0.2:8090", 200), ("[::1]:8090", 200)])
    func onlyALoopbackNameIsAnsweredWithoutCredentials(host: String, status: Int) async throws {
        try await TestDatabase.with { database in
            try await ConsoleHarness.with(database) { console in
                let answer = try await console.get("/", headers: [("Host", host)])
                #expect(answer.status == status)
                Self.expectSecurityHeaders(answer, host)
            }
        }
    }

    /// Error pages and redirects carry the same headers as pages.
    @Test func everyAnswerOfAPageCarriesTheSecurityHeaders() async throws {
        try await TestDatabase.with { database in
            try await SyntheticDeadLetter.insert([.resync(id: 700_001, connectionID: 1, lineage: "L1")], into: database)
            try await ConsoleHarness.with(database) { console in
                let answers = [
                    ("queue", try await console.get("/")),
                    ("a 400", try await console.get("/dead-letters?store=amazon")),
                    ("a 404", try await console.get("/nowhere")),
                    ("a 403", try await console.post("/dead-letters/700001/discard", [("confirmed", "yes")])),
                    ("a confirmation", try await console.post("/dead-letters/700001/discard",
                                                              [("csrf", try await console.get("/dead-letters").csrf())])),
                    ("a 303", try await console.confirm("/dead-letters/700001/discard", [])),
                ]
                #expect(answers.map(\.1.status) == [200, 400, 404, 403, 200, 303])
                for (what, answer) in answers { Self.expectSecurityHeaders(answer, what) }
            }
        }
    }

    /// Text from outside — a reason, a payload, a search — is shown as text on every page, never as markup.
    @Test func textFromOutsideIsNeverMarkup() async throws {
        try await TestDatabase.with { database in
            let attack = #"<script>alert(1)</script>"'><img src=x onerror=alert(2)>"#
            let payload = String(decoding: try JSONSerialization.data(withJSONObject: ["connection_id": 1, "lineage": attack,
                                                                                      "reason": attack]), as: UTF8.self)
            try await SyntheticDeadLetter.insert([SyntheticDeadLetter(id: 700_001, kind: "apple.resync", payload: payload,
                                                                      reason: attack, minutesAgo: 1)], into: database)
            try await ConsoleHarness.with(database) { console in
                for path in ["/", "/dead-letters", "/dead-letters/700001", "/dead-letters?" + PercentEncoding.form([("reason", attack)]),
                             ConsolePurchaseTests.search(attack)] {
                    let answer = try await console.get(path)
                    #expect(answer.status == 200, "\(path)")
                    #expect(!answer.text.contains("<script>alert") && !answer.text.contains("<img src=x"), "\(path)")
                }
                #expect(try await console.get("/dead-letters/700001").text.contains(htmlEscaped(attack)))
            }
        }
    }

    /// Every kind of page, over dead letters and purchases that hold every secret StoreSync keeps: none of the
    /// connections' private keys, no push's bearer token, no account token's secret is in any page's bytes.
    @Test func noPageShowsASecret() async throws {
        var options = Pipeline.Options.googleProduction
        options.mappedProducts = ["pro.monthly"]
        try await Pipeline.with(options) { pipeline in
            let db = pipeline.database
            let (customerID, issued) = try await db.pool.transaction { db in
                let customer = try Catalog.addCustomer(accountID: pipeline.accountID, on: db)
                return (customer, try AccountTokens.issue(customerID: customer, sha256: { Digest.sha256($0) }, on: db))
            }
            let secret = try #require(issued.secret)
            let token = try #require(UUID(uuidString: issued.token))
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: token).originalTransactionId
            try await pipeline.simulator.subscribe(productId: "pro.yearly", price: 99_990, currency: "USD", appAccountToken: token)
            let (_, _, googleLineage) = try await pipeline.mirroredPlayPurchase()
            try await pipeline.storeSkippingReceiptChecks(try pipeline.appleBody([
                "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString, "version": "2.0",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                "data": ["bundleId": Pipeline.bundleID, "appAppleId": Pipeline.appAppleID, "environment": "Production"],
            ], signer: try LocalApplePKI.generate()), kind: "apple.notification")
            let push = try CraftedPlayPushes(pipeline).push(messageID: "console-secret-1", purchaseToken: googleLineage)
            let bearer = tamperingSignature(of: push.authorization)
            try await pipeline.storeSkippingReceiptChecks(push.body, kind: "google.notification", authorization: bearer)
            try await pipeline.settle()
            try await SyntheticDeadLetter.insert([.resync(id: 700_001, connectionID: pipeline.connection.id, lineage: lineage)],
                                                 into: db)

            let keys = try await db.pool.query("SELECT api_private_key FROM store_connections ORDER BY id")
                .map { try $0.decode(0, as: String.self) }
            #expect(keys.count == 2)
            let jwt = bearer.dropFirst("Bearer ".count).split(separator: ".").map(String.init)
            var secrets = ["PRIVATE KEY", secret, String(bearer.dropFirst("Bearer ".count)), jwt[2]]
            for key in keys {
                let body = key.split(separator: "\n").filter { !$0.hasPrefix("-----") }
                // Each line of the base64 body too, but not a last one short enough to occur by chance.
                secrets += [key, body.joined()] + body.filter { $0.count >= 16 }.map(String.init)
            }
            let deadLetters = try await ConsoleDeadLetterTests.deadLetters(db)
            #expect(deadLetters.count == 4, "\(deadLetters)")
            let purchases = try await db.pool.query("SELECT id FROM store_purchases ORDER BY id").map { try $0.decode(0, as: Int64.self) }
            #expect(purchases.count == 2)

            try await ConsoleHarness.with(db) { console in
                var paths = ["/", "/dead-letters", "/purchases", "/purchases?q=\(customerID)", "/purchases?q=\(issued.token)",
                             "/purchases?q=\(googleLineage)"]
                paths += deadLetters.map { "/dead-letters/\($0.id)" } + purchases.map { "/purchases/\($0)" }
                for path in paths {
                    var answer = try await console.get(path)
                    if answer.status == 303, let location = answer.header("location") { answer = try await console.get(location) }
                    #expect(answer.status == 200, "\(path): \(answer.text.prefix(1000))")
                    Self.expectSecurityHeaders(answer, path)
                    for secret in secrets where answer.text.contains(secret) {
                        Issue.record("\(path) shows a secret: \(secret.prefix(24))…")
                    }
                }
                let detail = try await console.get("/dead-letters/\(try #require(deadLetters.last { $0.reason.hasPrefix("push") }).id)")
                #expect(detail.text.contains("(a bearer token, not shown)"))
            }
        }
    }

    /// The console's login can do what its pages do and nothing it should not: never read a credential, a token's
    /// secret hash or a customer's e-mail, never change a job or a dead letter in place (its one column of UPDATE
    /// is for the retry's row lock), never delete a job.
    @Test("the console's role is refused what the console never does", arguments: [
        "SELECT api_private_key FROM store_connections", "SELECT api_key_id FROM store_connections",
        "SELECT api_client_email FROM store_connections", "SELECT secret_sha256 FROM account_tokens",
        "SELECT email FROM customers", "SELECT name FROM customers", "UPDATE dead_letters SET reason = 'x'",
        "UPDATE jobs SET run_at = now()", "DELETE FROM jobs", "DELETE FROM store_purchases", "DELETE FROM operator_actions",
        "UPDATE operator_actions SET operator = 'someone else'", "INSERT INTO accounts (host) VALUES ('evil.test')",
        "INSERT INTO jobs (kind) VALUES ('apple.resync')", "UPDATE dead_letters SET id = id + 1",
        "SELECT id FROM dead_letters FOR UPDATE",
    ])
    func theConsolesRoleIsRefused(statement: String) async throws {
        try await TestDatabase.with { database in
            try await ConsoleHarness.with(database) { console in
                let connection = try await PostgresConnection.connect(url: console.roleURL)
                let refused = await #expect(throws: PostgresError.self) { try await connection.query(statement) }
                #expect(refused?.sqlState == "42501", "\(refused.map(String.init(describing:)) ?? "")")
                await connection.close()
            }
        }
    }

    static func expectSecurityHeaders(_ answer: ConsoleHarness.Answer, _ what: String,
                                      sourceLocation: SourceLocation = #_sourceLocation) {
        let policy = answer.header("content-security-policy") ?? ""
        for directive in ["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'"] {
            #expect(policy.contains(directive), "\(what): CSP \(policy)", sourceLocation: sourceLocation)
        }
        #expect(answer.header("x-content-type-options") == "nosniff", "\(what)", sourceLocation: sourceLocation)
        #expect(answer.header("cache-control") == "no-store", "\(what)", sourceLocation: sourceLocation)
        #expect(answer.header("x-frame-options") == "DENY", "\(what)", sourceLocation: sourceLocation)
        #expect(answer.header("referrer-policy") == "same-origin", "\(what)", sourceLocation: sourceLocation)
    }
}
