import Accounts
import Console
import Foundation
import Postgres
import Simulator
import StoreModel
import TestPKI
import TestSupport
import Testing

/// The console's dead letters over real HTTP, as a member of `storesync_console`: real dead letters from the
/// pipeline read whole (the reason, every attempt, the notification decoded and judged again, the purchase it
/// concerns), synthetic backlogs for filters and paging, and retry and discard — one, ticked, or all a filter
/// takes — with their confirmation, their CSRF checks, and what they record.
@Suite struct ConsoleDeadLetterTests {
    // MARK: Real dead letters

    /// Three ways the pipeline gives up — an unmapped product, an Apple notification signed by a stranger, a
    /// Play push whose token's signature is broken — each read whole: the reason, every attempt with its worker
    /// and error, the notification decoded, and what verification says of it now.
    @Test func theDetailShowsTheAttemptsTheDecodedNotificationAndTheVerdictNow() async throws {
        var options = Pipeline.Options.googleProduction
        options.mappedProducts = ["pro.monthly"]
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let bought = try await pipeline.simulator.subscribe(productId: "pro.yearly", price: 99_990, currency: "USD",
                                                                appAccountToken: customer.token)
            let forger = try LocalApplePKI.generate()
            let forgedUUID = UUID().uuidString
            try await pipeline.storeSkippingReceiptChecks(try pipeline.appleBody([
                "notificationType": "DID_RENEW", "notificationUUID": forgedUUID, "version": "2.0",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                "data": ["bundleId": Pipeline.bundleID, "appAppleId": Pipeline.appAppleID, "environment": "Production"],
            ], signer: forger), kind: "apple.notification")
            let push = try CraftedPlayPushes(pipeline).push(messageID: "console-forged-1", purchaseToken: "token-forged")
            let badToken = tamperingSignature(of: push.authorization)
            try await pipeline.storeSkippingReceiptChecks(push.body, kind: "google.notification", authorization: badToken)
            try await pipeline.settle()
            let letters = try await Self.deadLetters(pipeline.database)
            #expect(letters.count == 3, "\(letters)")

            try await ConsoleHarness.with(pipeline.database) { console in
                let unmapped = try #require(letters.first { $0.reason.hasPrefix("product pro.yearly is not mapped") })
                let page = try await console.get("/dead-letters/\(unmapped.id)")
                #expect(page.status == 200)
                #expect(page.text.contains("<strong>product pro.yearly is not mapped on connection \(pipeline.connection.id)</strong>"))
                try await Self.expectEveryAttempt(of: unmapped.id, on: page, database: pipeline.database)
                for (label, value) in [("Notification", "SUBSCRIBED/INITIAL_BUY"), ("Transaction", bought.transactionId),
                                       ("Lineage (original transaction)", bought.originalTransactionId),
                                       ("Environment", "Production"), ("Product", "pro.yearly"),
                                       ("Bundle", Pipeline.bundleID)] {
                    #expect(page.text.contains("<dt>\(label)</dt><dd>\(value)</dd>"), "\(label) \(value)")
                }
                #expect(page.text.contains(#"<span class="tag ok">verified</span>"#))
                #expect(page.text.contains("The purchase it names is not in the mirror (yet)."))

                let forged = try #require(letters.first { $0.reason.hasPrefix("verification failed") })
                let forgedPage = try await console.get("/dead-letters/\(forged.id)")
                #expect(forgedPage.status == 200)
                #expect(forgedPage.text.contains("<dt>Notification</dt><dd>DID_RENEW</dd>"))
                #expect(forgedPage.text.contains("<dt>notificationUUID</dt><dd>\(forgedUUID)</dd>"))
                #expect(forgedPage.text.contains(#"<span class="tag bad">refused</span> <code>VERIFICATION_FAILURE</code>"#))
                #expect(!forgedPage.text.contains(#"<span class="tag ok">verified</span>"#))
                try await Self.expectEveryAttempt(of: forged.id, on: forgedPage, database: pipeline.database)

                let google = try #require(letters.first { $0.reason.hasPrefix("push authentication failed") })
                let googlePage = try await console.get("/dead-letters/\(google.id)")
                #expect(googlePage.status == 200)
                for (label, value) in [("Pub/Sub message", "console-forged-1"), ("Package", Pipeline.packageName),
                                       ("Notification", "subscription, SUBSCRIPTION_PURCHASED"), ("Purchase token", "token-forged")] {
                    #expect(googlePage.text.contains("<dt>\(label)</dt><dd>\(value)</dd>"), "\(label) \(value)")
                }
                #expect(googlePage.text.contains(#"<span class="tag bad">refused</span> <code>bad signature</code>"#))
                #expect(googlePage.text.contains("(a bearer token, not shown)"))
                #expect(!googlePage.text.contains(String(badToken.dropFirst("Bearer ".count).split(separator: ".")[2])))
                try await Self.expectEveryAttempt(of: google.id, on: googlePage, database: pipeline.database)
            }
        }
    }

    /// Retried while the product is still unmapped, the notification goes back under its id and dies again under
    /// it; retried once the product is mapped, the worker mirrors it.
    @Test func aRetriedNotificationIsWorkedAgainUnderItsIDAndMirroredOnceMapped() async throws {
        var options = Pipeline.Options()
        options.mappedProducts = ["pro.monthly"]
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.yearly", price: 99_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            let id = try #require(try await Self.deadLetters(pipeline.database).first?.id)
            try await ConsoleHarness.with(pipeline.database) { console in
                let retried = try await console.confirm("/dead-letters/\(id)/retry", [], tokenFrom: "/dead-letters/\(id)")
                #expect(retried.status == 303)
                #expect(retried.header("location") == "/dead-letters?done=retry&count=1")
                try await pipeline.settle()
                let again: String = try await pipeline.database.pool.query(
                    "SELECT errors::text FROM dead_letters WHERE id = $1", [id]).first?.decode(0) ?? ""
                #expect(again.contains("replayed from dead letters"), "dead letter \(id) is not back: \(again)")

                try await pipeline.database.pool.transaction { db in
                    try Catalog.mapProduct(connectionID: pipeline.connection.id, productID: "pro.yearly",
                                           planPriceID: pipeline.planPrices["pro.yearly"]!, on: db)
                }
                #expect(try await console.confirm("/dead-letters/\(id)/retry", []).status == 303)
                try await pipeline.settle()
                #expect(try await pipeline.subscription(lineage)?.state == "active")
                #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
                #expect(try await Self.actions(pipeline.database) == [
                    Action(operatorName: ConsoleHarness.localOperator, action: "retry", deadLetterID: id,
                           kind: "apple.notification", result: "requeued", purchaseID: nil),
                    Action(operatorName: ConsoleHarness.localOperator, action: "retry", deadLetterID: id,
                           kind: "apple.notification", result: "requeued", purchaseID: nil),
                ])
            }
        }
    }

    /// A resync of a mirrored lineage links to its purchase; retrying one and discarding another are recorded in
    /// `operator_actions` and on the purchase's timeline, with who did it.
    @Test func actionsOnADeadLetterOfAMirroredPurchaseAreOnItsTimeline() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            let purchaseID: Int64 = try await pipeline.database.pool.query(
                "SELECT id FROM store_purchases WHERE lineage = $1", [lineage])[0].decode(0)
            try await SyntheticDeadLetter.insert([
                .resync(id: 900_001, connectionID: pipeline.connection.id, lineage: lineage),
                .resync(id: 900_002, connectionID: pipeline.connection.id, lineage: lineage),
            ], into: pipeline.database)
            try await ConsoleHarness.with(pipeline.database) { console in
                let page = try await console.get("/dead-letters/900001")
                #expect(page.status == 200, "\(page.text.prefix(3000))")
                #expect(page.text.contains(#"<a href="/purchases/\#(purchaseID)">\#(purchaseID)</a>"#))
                #expect(page.text.contains("<dt>Lineage</dt><dd>\(lineage)</dd>"))
                #expect(page.text.contains("<a href=\"/purchases?q=\(customer.id)\">\(customer.id)</a>"))

                #expect(try await console.confirm("/dead-letters/900001/retry", []).status == 303)
                #expect(try await console.confirm("/dead-letters/900002/discard", []).status == 303)
                #expect(try await Self.actions(pipeline.database) == [
                    Action(operatorName: ConsoleHarness.localOperator, action: "retry", deadLetterID: 900_001,
                           kind: "apple.resync", result: "requeued", purchaseID: purchaseID),
                    Action(operatorName: ConsoleHarness.localOperator, action: "discard", deadLetterID: 900_002,
                           kind: "apple.resync", result: "discarded", purchaseID: purchaseID),
                ])
                let events = try await pipeline.database.pool.query("""
                    SELECT kind, source, reference, store_event, detail->>'operator' FROM purchase_events
                    WHERE purchase_id = $1 AND source = 'console' ORDER BY id
                    """, [purchaseID]).map { row in
                    [try row.decode(0, as: String.self), try row.decode(1), try row.decode(2), try row.decode(3), try row.decode(4)]
                }
                #expect(events == [["dead_letter_retry", "console", "dead letter 900001", "apple.resync", ConsoleHarness.localOperator],
                                   ["dead_letter_discard", "console", "dead letter 900002", "apple.resync", ConsoleHarness.localOperator]])
                try await pipeline.settle()
                let story = try await console.get("/purchases/\(purchaseID)")
                #expect(story.text.contains("dead letter discard"), "\(story.text.prefix(3000))")
                #expect(story.text.contains("dead letter retry"))
            }
        }
    }

    // MARK: Filters and paging

    @Test(arguments: BacklogCase.filters)
    func aFilterTakesExactlyItsDeadLettersNewestFirstOnEveryPage(_ filter: BacklogCase) async throws {
        try await TestDatabase.with { database in
            let backlog = try await Backlog.seed(database)
            try await ConsoleHarness.with(database) { console in
                let query = backlog.resolve(filter.query)
                let expected = backlog.rows.filter { filter.takes($0, backlog) }
                    .sorted { ($0.minutesAgo, -$0.id) < ($1.minutesAgo, -$1.id) }.map(\.id)
                var shown: [Int64] = []
                var page = 1
                while true {
                    let answer = try await console.get("/dead-letters?\(query)\(query.isEmpty ? "" : "&")page=\(page)")
                    #expect(answer.status == 200)
                    let ids = answer.deadLetterLinks
                    #expect(ids.count <= 50)
                    if !expected.isEmpty {
                        #expect(answer.text.contains("of \(expected.count) dead letter"), "\(query) page \(page)")
                    }
                    shown += ids
                    guard answer.text.contains("Older →") else { break }
                    page += 1
                    try #require(page <= 3, "more pages than 64 dead letters fill")
                }
                #expect(shown == expected, "\(query)")
                if expected.isEmpty {
                    let answer = try await console.get("/dead-letters?\(query)")
                    #expect(answer.text.contains("0 dead letters"))
                    #expect(answer.text.contains("No dead letter matches."))
                }
            }
        }
    }

    /// 50 a page, newest first, with links to the older and newer pages that keep the filter.
    @Test func theListIsPagedByFiftyWithLinksThatKeepTheFilter() async throws {
        try await TestDatabase.with { database in
            let backlog = try await Backlog.seed(database)
            try await ConsoleHarness.with(database) { console in
                let newestFirst = backlog.rows.sorted { $0.minutesAgo < $1.minutesAgo }.map(\.id)
                let first = try await console.get("/dead-letters")
                #expect(first.deadLetterLinks == Array(newestFirst.prefix(50)))
                #expect(first.text.contains("1–50 of 64 dead letters."))
                #expect(first.text.contains("Page 1 of 2"))
                #expect(first.text.contains(#"<a href="/dead-letters?page=2">Older →</a>"#))
                #expect(!first.text.contains("← Newer"))
                let second = try await console.get("/dead-letters?page=2")
                #expect(second.deadLetterLinks == Array(newestFirst.dropFirst(50)))
                #expect(second.text.contains("51–64 of 64 dead letters."))
                #expect(second.text.contains(#"<a href="/dead-letters?page=1">← Newer</a>"#))
                #expect(!second.text.contains("Older →"))

                let filtered = try await console.get("/dead-letters?age=30d")
                let recent = backlog.rows.filter { $0.minutesAgo < 30 * 1440 }
                #expect(filtered.text.contains("1–50 of \(recent.count) dead letters match."))
                #expect(filtered.text.contains(#"<a href="/dead-letters?age=30d&amp;page=2">Older →</a>"#))
                #expect(filtered.text.contains(#"<option value="30d" selected>"#))
                // The bulk form carries the filter, so "all this filter shows" takes what the page showed.
                #expect(filtered.text.contains(#"<input type="hidden" name="age" value="30d">"#))
                #expect(filtered.text.contains("Retry all \(recent.count)"))
                // Every shape of row reads whole, even a notification whose body was never stored.
                for row in backlog.rows.prefix(6) {
                    let detail = try await console.get("/dead-letters/\(row.id)")
                    #expect(detail.status == 200, "\(row.kind): \(detail.text.prefix(2000))")
                    #expect(detail.text.contains("<strong>\(row.reason)</strong>"))
                }
            }
        }
    }

    @Test(arguments: [
        ("store=amazon", "the store is apple or google"),
        ("age=2h", "unknown age"),
        ("kind=Bad%20Kind", "is not a job kind"),
        ("reason=" + String(repeating: "x", count: 201), "at most 200 bytes"),
        ("account=" + String(repeating: "a", count: 254), "an account is its id or its host"),
    ])
    func anUnknownFilterValueIsRefusedWithWhatIsWrong(query: String, message: String) async throws {
        try await TestDatabase.with { database in
            try await ConsoleHarness.with(database) { console in
                let answer = try await console.get("/dead-letters?\(query)")
                #expect(answer.status == 400)
                #expect(answer.text.contains(message), "\(answer.text)")
                #expect(answer.header("content-type") == "text/html; charset=utf-8")
            }
        }
    }

    @Test func anUnknownDeadLetterIsAPageShaped404() async throws {
        try await TestDatabase.with { database in
            try await ConsoleHarness.with(database) { console in
                for path in ["/dead-letters/424242", "/dead-letters/abc", "/dead-letters/99999999999999999999"] {
                    let answer = try await console.get(path)
                    #expect(answer.status == 404, "\(path)")
                    #expect(answer.text.contains("<h1>Not found</h1>"), "\(path)")
                }
            }
        }
    }

    // MARK: Actions

    /// Retry puts the job back under its id, due now, with fresh attempts and its history; discard deletes it.
    /// Both are recorded with who did it, and the list says what happened.
    @Test func retryAndDiscardOfOneChangeTheQueueAndAreRecorded() async throws {
        try await TestDatabase.with { database in
            let backlog = try await Backlog.seed(database)
            let (retried, discarded) = (backlog.rows[0].id, backlog.rows[1].id)
            try await ConsoleHarness.with(database) { console in
                let retry = try await console.confirm("/dead-letters/\(retried)/retry", [])
                #expect(retry.status == 303)
                let location = try #require(retry.header("location"))
                #expect(try await console.get(location).text.contains("1 dead letter(s) back in the queue."))
                let job = try #require(try await database.pool.query(
                    "SELECT kind, attempt, errors::text, run_at <= now() FROM jobs WHERE id = $1", [retried]).first)
                #expect(try job.decode(0, as: String.self) == backlog.rows[0].kind)
                #expect(try job.decode(1, as: Int.self) == 0)
                let errors: String = try job.decode(2)
                #expect(errors.contains("first try: ") && errors.contains("replayed from dead letters"), "\(errors)")
                #expect(try job.decode(3, as: Bool.self))

                let discard = try await console.confirm("/dead-letters/\(discarded)/discard", [])
                #expect(discard.header("location") == "/dead-letters?done=discard&count=1")
                #expect(try await Self.remaining(database) == Set(backlog.rows.map(\.id)).subtracting([retried, discarded]))
                #expect(try await Self.queued(database) == [retried])
                #expect(try await Self.actions(database) == [
                    Action(operatorName: ConsoleHarness.localOperator, action: "retry", deadLetterID: retried,
                           kind: backlog.rows[0].kind, result: "requeued", purchaseID: nil),
                    Action(operatorName: ConsoleHarness.localOperator, action: "discard", deadLetterID: discarded,
                           kind: backlog.rows[1].kind, result: "discarded", purchaseID: nil),
                ])
                // Gone already: nothing happens, and the notice says so.
                let again = try await console.confirm("/dead-letters/\(retried)/retry", [])
                #expect(again.header("location") == "/dead-letters?done=retry&count=0&missing=1")
                #expect(try await Self.actions(database).count == 2)
            }
        }
    }

    /// A retry whose unique key a pending job holds keeps the dead letter, records why, and says so.
    @Test func aRetryKeepsADeadLetterWhoseUniqueKeyIsPending() async throws {
        try await TestDatabase.with { database in
            try await SyntheticDeadLetter.insert([.resync(id: 900_001, connectionID: 1, lineage: "L1")], into: database)
            _ = try await database.pool.query("UPDATE dead_letters SET unique_key = 'resync:1:L1' WHERE id = 900001")
            let pending: Int64 = try await database.pool.query(
                "INSERT INTO jobs (kind, unique_key, run_at) VALUES ('apple.resync', 'resync:1:L1', now() + interval '1 hour') RETURNING id"
            )[0].decode(0)
            try await ConsoleHarness.with(database) { console in
                let answer = try await console.confirm("/dead-letters/900001/retry", [])
                #expect(answer.header("location") == "/dead-letters?done=retry&count=0&kept=1")
                #expect(try await console.get("/dead-letters?done=retry&count=0&kept=1").text
                    .contains("0 dead letter(s) back in the queue. 1 kept: a pending job already has the same unique key."))
                #expect(try await Self.remaining(database) == [900_001])
                #expect(try await Self.queued(database) == [pending])
                #expect(try await Self.actions(database) == [
                    Action(operatorName: ConsoleHarness.localOperator, action: "retry", deadLetterID: 900_001,
                           kind: "apple.resync", result: "kept: a pending job already has unique key resync:1:L1", purchaseID: nil),
                ])
            }
        }
    }

    @Test(arguments: ["retry", "discard"])
    func theTickedDeadLettersAndOnlyThoseAreActedOn(action: String) async throws {
        try await TestDatabase.with { database in
            let backlog = try await Backlog.seed(database)
            let ticked = [backlog.rows[3].id, backlog.rows[10].id, backlog.rows[40].id]
            try await ConsoleHarness.with(database) { console in
                let answer = try await console.confirm("/dead-letters/actions",
                                                       [("action", action)] + ticked.map { ("id", String($0)) })
                #expect(answer.status == 303)
                #expect(answer.header("location") == "/dead-letters?done=\(action)&count=3")
                #expect(try await Self.remaining(database) == Set(backlog.rows.map(\.id)).subtracting(ticked))
                #expect(try await Self.queued(database) == (action == "retry" ? Set(ticked) : []))
                #expect(try await Self.actions(database).map(\.deadLetterID).sorted() == ticked.sorted())
                #expect(try await Self.actions(database).allSatisfy { $0.action == action && $0.operatorName == ConsoleHarness.localOperator })
            }
        }
    }

    /// "Retry all" and "discard all" take what the form's filter takes, and nothing else.
    @Test(arguments: [("retry-all", "kind=apple.resync&account=beta.test"), ("discard-all", "store=google"),
                      ("discard-all", "reason=a_b&age=30d")])
    func allAFilterTakesAndOnlyThatIsActedOn(action: String, query: String) async throws {
        try await TestDatabase.with { database in
            let backlog = try await Backlog.seed(database)
            let filter = try #require(BacklogCase.filters.first { $0.query == query })
            let taken = Set(backlog.rows.filter { filter.takes($0, backlog) }.map(\.id))
            try #require(!taken.isEmpty && taken.count < backlog.rows.count)
            try await ConsoleHarness.with(database) { console in
                let fields = query.split(separator: "&").map { pair in
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    return (String(parts[0]), String(parts[1]))
                }
                let diedBy = try await console.get("/dead-letters?\(query)").hiddenField("died_by")
                let answer = try await console.confirm("/dead-letters/actions", [("action", action)] + fields + [("died_by", diedBy)],
                                                       tokenFrom: "/dead-letters?\(query)")
                #expect(answer.status == 303)
                let verb = action.replacingOccurrences(of: "-all", with: "")
                #expect(answer.header("location") == "/dead-letters?\(query)&done=\(verb)&count=\(taken.count)")
                #expect(try await Self.remaining(database) == Set(backlog.rows.map(\.id)).subtracting(taken))
                #expect(try await Self.queued(database) == (verb == "retry" ? taken : []))
                #expect(Set(try await Self.actions(database).map(\.deadLetterID)) == taken)
            }
        }
    }

    /// "All a filter shows" is what the page showed: a dead letter that died after it was drawn is left alone, and a
    /// form without the page's bound is refused.
    @Test func allAPageShowedNeverTakesOneThatDiedAfterIt() async throws {
        try await TestDatabase.with { database in
            let backlog = try await Backlog.seed(database)
            try await ConsoleHarness.with(database) { console in
                let page = try await console.get("/dead-letters?store=google")
                let diedBy = try page.hiddenField("died_by")
                let shown = Set(backlog.rows.filter { $0.kind.hasPrefix("google.") }.map(\.id))
                let later = SyntheticDeadLetter(id: 9_999, kind: "google.notification", payload: #"{"account_id": 1}"#,
                                                reason: "died after the page", minutesAgo: -1)
                try await SyntheticDeadLetter.insert([later], into: database)
                let unbounded = try await console.confirm("/dead-letters/actions", [("action", "discard-all"), ("store", "google")],
                                                          tokenFrom: "/dead-letters?store=google")
                #expect(unbounded.status == 400)
                #expect(unbounded.text.contains("reload it"))
                let answer = try await console.confirm("/dead-letters/actions",
                                                       [("action", "discard-all"), ("store", "google"), ("died_by", diedBy)],
                                                       tokenFrom: "/dead-letters?store=google")
                #expect(answer.status == 303)
                #expect(Set(try await Self.actions(database).map(\.deadLetterID)) == shown)
                #expect(try await Self.remaining(database).contains(later.id))
            }
        }
    }

    /// Without `confirmed=yes` (no script ran the dialog) every action answers a page that asks, carrying the same
    /// form confirmed, and changes nothing.
    @Test(arguments: [
        ("/dead-letters/ID/retry", [(String, String)](), "Retry dead letter ID?"),
        ("/dead-letters/ID/discard", [], "Discard dead letter ID?"),
        ("/dead-letters/actions", [("action", "retry"), ("id", "ID"), ("id", "ID2")], "Retry these 2 dead letters?"),
        ("/dead-letters/actions", [("action", "discard-all"), ("store", "apple"), ("died_by", "DIEDBY")], "Discard these"),
    ])
    func anUnconfirmedActionAsksAndChangesNothing(path: String, fields: [(String, String)], question: String) async throws {
        try await TestDatabase.with { database in
            let backlog = try await Backlog.seed(database)
            let (id, id2) = (String(backlog.rows[0].id), String(backlog.rows[1].id))
            try await ConsoleHarness.with(database) { console in
                let diedBy = try await console.get("/dead-letters?store=apple").hiddenField("died_by")
                let place = { (text: String) in
                    text.replacingOccurrences(of: "ID2", with: id2).replacingOccurrences(of: "ID", with: id)
                        .replacingOccurrences(of: "DIEDBY", with: diedBy)
                }
                let token = try await console.get("/dead-letters").csrf()
                let target = place(path)
                let answer = try await console.post(target, [("csrf", token)] + fields.map { ($0.0, place($0.1)) })
                #expect(answer.status == 200)
                #expect(answer.text.contains(place(question)), "\(answer.text.prefix(3000))")
                #expect(answer.text.contains(#"<form method="post" action="\#(target)">"#))
                #expect(answer.text.contains(#"<input type="hidden" name="confirmed" value="yes">"#))
                for (name, value) in fields {
                    #expect(answer.text.contains(#"<input type="hidden" name="\#(name)" value="\#(place(value))">"#))
                }
                #expect(try await Self.remaining(database).count == backlog.rows.count)
                #expect(try await Self.queued(database).isEmpty)
                #expect(try await Self.actions(database).isEmpty)
                // The page's own form, submitted as is, does what it asked.
                let confirmed = try await console.post(target, [("csrf", try answer.csrf())] + fields.map { ($0.0, place($0.1)) }
                                                       + [("confirmed", "yes")])
                #expect(confirmed.status == 303)
                #expect(try await Self.remaining(database).count < backlog.rows.count)
            }
        }
    }

    /// A form post from anywhere but the console's own page, for this operator, is refused and changes nothing:
    /// without the token, with one issued to another operator, a forged one, or sent by another site.
    @Test(arguments: CSRFCase.allCases)
    func aForgedOrForeignFormIsRefused(_ forgery: CSRFCase) async throws {
        try await TestDatabase.with { database in
            let backlog = try await Backlog.seed(database)
            let credentials = try OperatorCredentials.twoOperators()
            try await ConsoleHarness.with(database, credentials: credentials.file) { console in
                let alice = console.signedIn(as: "alice", password: credentials.password)
                let bob = console.signedIn(as: "bob", password: credentials.password)
                let own = try await alice.get("/dead-letters").csrf()
                let (token, headers): (String?, [(name: String, value: String)]) = switch forgery {
                case .missing: (nil, [])
                case .otherOperator: (try await bob.get("/dead-letters").csrf(), [])
                case .tampered: (String(own.dropLast()) + (own.hasSuffix("A") ? "B" : "A"), [])
                case .foreignOrigin: (own, [("Origin", "http://evil.example")])
                case .crossSite: (own, [("Sec-Fetch-Site", "cross-site")])
                }
                let id = String(backlog.rows[0].id)
                for (path, fields) in [("/dead-letters/\(id)/discard", [("confirmed", "yes")]),
                                       ("/dead-letters/actions", [("action", "discard-all"), ("confirmed", "yes")])] {
                    let answer = try await alice.post(path, (token.map { [("csrf", $0)] } ?? []) + fields, headers: headers)
                    #expect(answer.status == 403, "\(path): \(answer.text.prefix(500))")
                    #expect(answer.text.contains("<h1>Refused</h1>"))
                }
                #expect(try await Self.remaining(database).count == backlog.rows.count)
                #expect(try await Self.actions(database).isEmpty)
                // The same form from the console's own page, as a browser sends it, goes through.
                let genuine = try await alice.post("/dead-letters/\(id)/discard", [("csrf", own), ("confirmed", "yes")],
                                                   headers: [("Origin", console.baseURL), ("Sec-Fetch-Site", "same-origin")])
                #expect(genuine.status == 303)
                #expect(try await Self.actions(database).map(\.operatorName) == ["alice"])
            }
        }
    }

    // MARK: Support

    struct Action: Equatable {
        let operatorName: String
        let action: String
        let deadLetterID: Int64
        let kind: String
        let result: String
        let purchaseID: Int64?
    }

    static func actions(_ database: TestDatabase) async throws -> [Action] {
        try await database.pool.query("""
            SELECT operator, action, dead_letter_id, kind, result, purchase_id FROM operator_actions ORDER BY id
            """).map { row in
            Action(operatorName: try row.decode(0), action: try row.decode(1), deadLetterID: try row.decode(2),
                   kind: try row.decode(3), result: try row.decode(4), purchaseID: try row.decodeOptional(5))
        }
    }

    static func deadLetters(_ database: TestDatabase) async throws -> [(id: Int64, reason: String)] {
        try await database.pool.query("SELECT id, reason FROM dead_letters ORDER BY id").map { (try $0.decode(0), try $0.decode(1)) }
    }

    static func remaining(_ database: TestDatabase) async throws -> Set<Int64> {
        Set(try await database.pool.query("SELECT id FROM dead_letters").map { try $0.decode(0, as: Int64.self) })
    }

    static func queued(_ database: TestDatabase) async throws -> Set<Int64> {
        Set(try await database.pool.query("SELECT id FROM jobs").map { try $0.decode(0, as: Int64.self) })
    }

    /// Every attempt the queue recorded for dead letter `id` is on its page: its worker and its error.
    static func expectEveryAttempt(of id: Int64, on page: ConsoleHarness.Answer, database: TestDatabase) async throws {
        let errors: String = try await database.pool.query("SELECT errors::text FROM dead_letters WHERE id = $1", [id])[0].decode(0)
        let attempts = try #require(try JSONSerialization.jsonObject(with: Data(errors.utf8)) as? [[String: Any]])
        #expect(!attempts.isEmpty)
        for attempt in attempts {
            let worker = try #require(attempt["worker"] as? String)
            let error = try #require(attempt["error"] as? String)
            #expect(page.text.contains("<td>\(htmlEscaped(worker))</td><td>\(htmlEscaped(error))</td>"),
                    "attempt \(attempt) of dead letter \(id) is not on its page")
        }
    }
}

/// Text as the console escapes it into a page.
func htmlEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        .replacingOccurrences(of: "'", with: "&#39;")
}

/// How a form post can fail to be the console's own.
enum CSRFCase: String, CaseIterable, Sendable {
    case missing, otherOperator, tampered, foreignOrigin, crossSite
}

extension OperatorCredentials {
    /// A credentials file naming alice and bob with one password, hashed with few iterations so tests stay quick.
    static func twoOperators() throws -> (file: OperatorCredentials, password: String) {
        let password = "correct horse battery"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("console-operators-\(UUID()).txt").path
        let text = try ["alice", "bob"].map { try OperatorCredentials.line(name: $0, password: password, iterations: 1_000) }
            .joined(separator: "\n")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return (try OperatorCredentials(contentsOf: path), password)
    }
}

/// Two accounts — alpha with an Apple and a Google connection, beta with an Apple one — and 64 dead letters of
/// both stores' notifications and resyncs, with reasons that differ in case and carry `%` and `_`, dead from
/// minutes to weeks ago: enough for two pages, every filter, and ages on either side of each bound.
struct Backlog {
    struct Row: Sendable {
        let id: Int64
        let kind: String
        /// The account a notification names, or whose connection a resync is of.
        let accountID: Int64
        let reason: String
        let minutesAgo: Int
    }

    let alpha: Int64
    let beta: Int64
    let rows: [Row]

    static let reasons = ["Product pro.yearly is NOT mapped on connection 1", "HTTP 500 from the store",
                          "rate limited at 50% of quota", "key a_b refused", "key axb refused"]

    static func seed(_ database: TestDatabase) async throws -> Backlog {
        let (alpha, beta, connections) = try await database.pool.transaction { db in
            let alpha = try Catalog.addAccount(host: "alpha.test", on: db)
            let beta = try Catalog.addAccount(host: "beta.test", on: db)
            let alphaApple = try Catalog.addConnection(Catalog.NewConnection(accountID: alpha, store: .apple,
                                                                             appIdentifier: "com.example.alpha",
                                                                             environment: .production), on: db)
            let alphaGoogle = try Catalog.addConnection(Catalog.NewConnection(accountID: alpha, store: .google,
                                                                              appIdentifier: "com.example.alpha",
                                                                              environment: .production), on: db)
            let betaApple = try Catalog.addConnection(Catalog.NewConnection(accountID: beta, store: .apple,
                                                                            appIdentifier: "com.example.beta",
                                                                            environment: .production), on: db)
            return (alpha, beta, [alphaApple.id, alphaGoogle.id, betaApple.id])
        }
        var rows: [Row] = []
        var letters: [SyntheticDeadLetter] = []
        for index in 0..<64 {
            // Six shapes: both stores' notifications of alpha, beta's Apple notifications, and resyncs of each
            // connection; the reasons cycle by five, so shapes and reasons combine differently down the list.
            let (kind, account, payload): (String, Int64, String) = switch index % 6 {
            case 0: ("apple.notification", alpha, #"{"account_id": \#(alpha)}"#)
            case 1: ("google.notification", alpha, #"{"account_id": \#(alpha)}"#)
            case 2: ("apple.notification", beta, #"{"account_id": \#(beta)}"#)
            case 3: ("apple.resync", alpha, #"{"connection_id": \#(connections[0]), "lineage": "L\#(index)", "reason": "manual"}"#)
            case 4: ("google.resync", alpha, #"{"connection_id": \#(connections[1]), "lineage": "T\#(index)", "reason": "manual"}"#)
            default: ("apple.resync", beta, #"{"connection_id": \#(connections[2]), "lineage": "L\#(index)", "reason": "manual"}"#)
            }
            // Quadratic ages, 7 minutes off the hour, so no row sits within minutes of a filter's bound.
            let row = Row(id: 800_000 + Int64(index), kind: kind, accountID: account, reason: reasons[index % 5],
                          minutesAgo: index * index * 15 + 7)
            rows.append(row)
            letters.append(SyntheticDeadLetter(id: row.id, kind: kind, payload: payload, reason: row.reason,
                                               minutesAgo: row.minutesAgo))
        }
        try await SyntheticDeadLetter.insert(letters, into: database)
        return Backlog(alpha: alpha, beta: beta, rows: rows)
    }

    /// `query` with `{alpha}` and `{beta}` replaced by the accounts' ids.
    func resolve(_ query: String) -> String {
        query.replacingOccurrences(of: "{alpha}", with: String(alpha)).replacingOccurrences(of: "{beta}", with: String(beta))
    }
}

/// A dead letters query and which of the backlog's rows it must take.
struct BacklogCase: Sendable, CustomTestStringConvertible {
    let query: String
    let takes: @Sendable (Backlog.Row, Backlog) -> Bool

    var testDescription: String { query.isEmpty ? "(no filter)" : query }

    static let filters: [BacklogCase] = [
        BacklogCase(query: "") { _, _ in true },
        BacklogCase(query: "kind=apple.resync") { row, _ in row.kind == "apple.resync" },
        BacklogCase(query: "kind=google.sweep") { _, _ in false },
        BacklogCase(query: "store=google") { row, _ in row.kind.hasPrefix("google.") },
        BacklogCase(query: "store=apple&kind=apple.notification") { row, _ in row.kind == "apple.notification" },
        BacklogCase(query: "account={alpha}") { row, backlog in row.accountID == backlog.alpha },
        BacklogCase(query: "account=ALPHA.test") { row, backlog in row.accountID == backlog.alpha },
        BacklogCase(query: "account=beta.test") { row, backlog in row.accountID == backlog.beta },
        BacklogCase(query: "account=424242") { _, _ in false },
        BacklogCase(query: "account=nobody.test") { _, _ in false },
        BacklogCase(query: "reason=not%20MAPPED") { row, _ in row.reason.lowercased().contains("not mapped") },
        // `%` and `_` are taken literally: "50%" is not "500", "a_b" is not "axb".
        BacklogCase(query: "reason=50%25") { row, _ in row.reason.contains("50%") },
        BacklogCase(query: "reason=a_b") { row, _ in row.reason.contains("a_b") },
        BacklogCase(query: "reason=a_b&age=30d") { row, _ in row.reason.contains("a_b") && row.minutesAgo < 30 * 1440 },
        BacklogCase(query: "age=1h") { row, _ in row.minutesAgo < 60 },
        BacklogCase(query: "age=24h") { row, _ in row.minutesAgo < 1440 },
        BacklogCase(query: "age=7d") { row, _ in row.minutesAgo < 7 * 1440 },
        BacklogCase(query: "age=30d") { row, _ in row.minutesAgo < 30 * 1440 },
        BacklogCase(query: "kind=apple.resync&account=beta.test") { row, backlog in
            row.kind == "apple.resync" && row.accountID == backlog.beta
        },
        BacklogCase(query: "store=apple&account=beta.test&reason=KEY&age=30d") { row, backlog in
            row.kind.hasPrefix("apple.") && row.accountID == backlog.beta && row.reason.hasPrefix("key")
                && row.minutesAgo < 30 * 1440
        },
    ]
}
