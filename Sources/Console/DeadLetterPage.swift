import Accounts
import Foundation
import HTTP
import Ingest
import IngestJobs
import Mirror
import Postgres
import Queue

/// `GET /dead-letters/{id}`: one dead letter whole — why it gave up, every attempt with its worker and error, the
/// notification decoded and what verifying it says now, the purchase and customer it concerns — and the buttons
/// that retry or discard it.
enum DeadLetterPage {
    static func render(_ console: Console, _ request: ConsoleRequest) async throws -> HTTPResponse {
        guard let id = request.pathID(after: "/dead-letters/") else {
            return Layout.problem(404, "There is no page at \(request.http.path.prefix(200)).", operatorName: request.operatorName)
        }
        guard let detail = try await DeadLetters(pool: console.pool).show(id: id) else {
            return Layout.problem(404, "There is no dead letter \(id): it may have been retried or discarded already.",
                                  operatorName: request.operatorName)
        }
        let trust: HostTrust? = if let account = detail.entry.accountID {
            try await console.pool.query(HostTrust.loading(accountID: account))
        } else {
            nil
        }
        let reading = DeadLetterReading(detail, trust: trust)
        let verdict = await verification(of: detail, reading: reading, trust: trust, console: console)
        let purchase = try await concerned(reading.reference, console: console)
        let entry = detail.entry
        let now = Date()
        let facts = Layout.facts([
            ("Kind", "\(entry.kind)"), ("Reason", "<strong>\(entry.reason)</strong>"),
            ("Attempts", "\(entry.attempts) of \(detail.maxAttempts)"),
            ("Queued", "\(Layout.time(entry.createdAt)) (\(Layout.age(entry.createdAt, now: now)) ago)"),
            ("Died", "\(Layout.time(entry.deadAt)) (\(Layout.age(entry.deadAt, now: now)) ago)"),
            ("Account", "\(entry.accountID.map(String.init) ?? "—")"), ("Unique key", "\(detail.uniqueKey ?? "—")"),
            ("Priority", "\(Int(detail.priority))"),
        ])
        let content: HTML = """
            \(facts)
            <div class="actions">
            <form method="post" action="/dead-letters/\(id)/retry">\(console.csrfField(for: request.operatorName))
            <button data-confirm="Put dead letter \(id) back in the queue, due now?">Retry</button></form>
            <form method="post" action="/dead-letters/\(id)/discard">\(console.csrfField(for: request.operatorName))
            <button class="danger" data-confirm="Discard dead letter \(id) for good?">Discard</button></form>
            </div>
            <h2>What it concerns</h2>
            \(purchaseSection(purchase, reading: reading))
            \(reading.notification == nil ? HTML.empty : "<h2>Verification now</h2>\(verdict)")
            \(contentSection(reading))
            <h2>Attempts</h2>
            \(attempts(detail.errors))
            <details><summary>Job payload</summary><pre>\(DeadLetterReading.pretty(Data(detail.payload.utf8)))</pre></details>
            \(DeadLetterReading.shownHeaders(detail.headers).map { "<details><summary>Stored headers</summary><pre>\($0)</pre></details>" } ?? HTML.empty)
            """
        return Layout.page("Dead letter \(id)", section: .deadLetters, operatorName: request.operatorName, content)
    }

    private static func contentSection(_ reading: DeadLetterReading) -> HTML {
        var parts: [HTML] = []
        if !reading.facts.isEmpty {
            parts.append("<h2>\(reading.notification == nil ? "Job" : "Notification, as decoded (not verified)")</h2>")
            parts.append(Layout.facts(reading.facts.map { ($0.0, "\($0.1)") }))
        }
        if let problem = reading.problem { parts.append("<p class=\"warning\">\(problem)</p>") }
        if let decoded = reading.decoded {
            parts.append("<details><summary>Decoded payload</summary><pre>\(decoded)</pre></details>")
        }
        return HTML(parts)
    }

    /// What verifying the notification says now, as ingest would judge it against the account's connections.
    private static func verification(of detail: DeadLetters.Detail, reading: DeadLetterReading, trust: HostTrust?,
                                     console: Console) async -> HTML {
        guard let notification = reading.notification else { return .empty }
        guard let trust else { return "<p class=\"warning\">Its account no longer exists: nothing to verify against.</p>" }
        let verdict = await console.authenticator.judge(detail.raw ?? Data(), from: notification.source, trust: trust,
                                                        authorization: IngestedHeaders.authorization(detail.headers),
                                                        receivedAt: notification.receivedAt)
        switch verdict {
        case .genuine:
            return "<p><span class=\"tag ok\">verified</span> Signed by the store for a connection of account \(trust.accountID).</p>"
        case .refused(_, let code, let reason):
            return "<p><span class=\"tag bad\">refused</span> <code>\(code)</code>: \(reason)</p>"
        case .unavailable(let reason), .databaseUnreachable(let reason, _):
            return "<p><span class=\"tag warn\">cannot tell now</span> \(reason)</p>"
        case .unknownHost:
            return "<p><span class=\"tag bad\">refused</span> The account has no host.</p>"
        }
    }

    private static func concerned(_ reference: PurchaseSearch.Reference?, console: Console) async throws -> PurchaseStory.Purchase? {
        guard let reference else { return nil }
        guard let id = try await console.pool.run({ db in try PurchaseSearch.purchaseID(reference, on: db) }) else { return nil }
        return try await console.pool.transaction { db in try PurchaseStory.read(id: id, on: db)?.purchase }
    }

    private static func purchaseSection(_ purchase: PurchaseStory.Purchase?, reading: DeadLetterReading) -> HTML {
        guard let purchase else {
            return reading.reference == nil ? "<p class=\"empty\">It names no purchase.</p>"
                : "<p class=\"empty\">The purchase it names is not in the mirror (yet).</p>"
        }
        let customer: HTML = purchase.customerID.map { "<a href=\"\(Layout.link("/purchases", [("q", $0)]))\">\($0)</a>" }
            ?? "unlinked (pending claim)"
        return Layout.facts([
            ("Purchase", "<a href=\"/purchases/\(purchase.id)\">\(purchase.id)</a> · \(purchase.store.rawValue) · \(purchase.environment)"),
            ("Lineage", "\(purchase.lineage)"), ("Product", "\(purchase.productID)"),
            ("State", "\(purchase.state), expires \(Layout.time(purchase.expiresAt))"), ("Customer", customer),
        ])
    }

    /// Every attempt's time, worker and error, from the JSON array the queue keeps (replays and lease lapses too).
    private static func attempts(_ json: String) -> HTML {
        guard let list = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] else {
            return "<pre>\(json)</pre>"
        }
        let rows = list.map { item -> [HTML] in
            let text = { (key: String) -> String in item[key].map { "\($0)" } ?? "—" }
            return ["\(text("attempt"))", "\(text("at"))", "\(text("worker"))",
                    "\(item["error"].map { "\($0)" } ?? text("event"))"]
        }
        return Layout.table("Every attempt, oldest first", headers: ["Attempt", "At", "Worker", "Error"], rows: rows,
                            empty: "No attempt recorded.")
    }
}
