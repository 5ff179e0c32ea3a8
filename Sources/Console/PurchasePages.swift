import Foundation
import HTTP
import Mirror
import Postgres

/// `GET /purchases?q=…`: find a purchase by what on-call was handed; one match opens its story at once.
enum PurchaseSearchPage {
    static func render(_ console: Console, _ request: ConsoleRequest) async throws -> HTTPResponse {
        let query = request.parameter("q")
        if let query, query.utf8.count > 4096 {
            return Layout.problem(400, "Search for at most 4,096 bytes.", operatorName: request.operatorName)
        }
        let matches: [PurchaseSearch.Match] = if let query {
            try await console.pool.run { db in try PurchaseSearch.find(query, on: db) }
        } else {
            []
        }
        if matches.count == 1, let only = matches.first { return Layout.redirect(to: "/purchases/\(only.purchaseID)") }
        let rows = matches.map { match -> [HTML] in
            ["<a href=\"/purchases/\(match.purchaseID)\">\(match.purchaseID)</a>", "\(match.store.rawValue)", "\(match.environment)",
             Layout.clipped(match.lineage, 40), "\(match.productID)", "\(match.state)", "\(match.customerID ?? "unlinked")",
             "\(match.matchedBy)"]
        }
        let results: HTML = query == nil ? .empty : Layout.table(
            "Purchases matching", headers: ["Purchase", "Store", "Environment", "Lineage", "Product", "State", "Customer", "Found as"],
            rows: rows, empty: "No purchase is known by that.")
        let content: HTML = """
            <form class="filters" method="get" action="/purchases" role="search">
            <label>Lineage, transaction or order id, purchase token, customer id or account token
            <input name="q" value="\(query)" size="48" autofocus></label>
            <button type="submit">Search</button>
            </form>
            \(results)
            """
        return Layout.page("Purchases", section: .purchases, operatorName: request.operatorName, content)
    }
}

/// `GET /purchases/{id}`: a purchase's story — the page on-call opens when a customer says "I paid and I don't have
/// pro": what the store said last, every notification and resync applied, state changes, links, charges, refunds,
/// drift and what on-call did, on one timeline.
enum PurchasePage {
    static func render(_ console: Console, _ request: ConsoleRequest) async throws -> HTTPResponse {
        guard let id = request.pathID(after: "/purchases/") else {
            return Layout.problem(404, "There is no page at \(request.http.path.prefix(200)).", operatorName: request.operatorName)
        }
        guard let story = try await console.pool.transaction({ db in try PurchaseStory.read(id: id, on: db) }) else {
            return Layout.problem(404, "There is no purchase \(id).", operatorName: request.operatorName)
        }
        let purchase = story.purchase
        // What the customer holds now, from every subscription of theirs: the answer to "I paid and I don't have pro".
        let entitlements: [Entitlement]? = if let customer = purchase.customerID {
            try await console.pool.query(Entitlement.holding(customer))
        } else {
            nil
        }
        let held: HTML = entitlements.map { list -> HTML in
            list.isEmpty ? "<span class=\"tag bad\">none</span>" : HTML(list.map { entitlement -> HTML in
                "<span class=\"tag ok\">\(entitlement.key)</span> until \(Layout.time(entitlement.longest.expiresAt)) "
            })
        } ?? "— (no customer yet)"
        let customer: HTML = purchase.customerID.map {
            "<a href=\"\(Layout.link("/purchases", [("q", $0)]))\">\($0)</a> (linked \(Layout.time(purchase.linkedAt)))"
        } ?? "<span class=\"tag warn\">unlinked</span> pending claim"
        let facts = Layout.facts([
            ("Store", "\(purchase.store.rawValue) · \(purchase.environment) · \(purchase.appIdentifier) (connection \(purchase.connectionID), account \(purchase.accountID))"),
            ("Lineage", "<span class=\"mono\">\(purchase.lineage)</span>"),
            ("State", "\(stateTag(purchase.state)) expires \(Layout.time(purchase.expiresAt))\(purchase.autoRenew ? ", renews" : ", does not renew")\(purchase.inFreeTrial ? ", free trial" : "")"),
            ("Product", "\(purchase.productID)\(purchase.basePlanID.map { " / \($0)" } ?? "")"),
            ("Customer", customer), ("Entitlements now", held), ("Account token", "\(purchase.accountToken ?? "—")"),
            ("Store's answer", "as of \(Layout.time(purchase.asOf))\(purchase.needsAcknowledgement ? " · acknowledgement pending" : "")"),
            ("Mirrored", "since \(Layout.time(purchase.createdAt)), updated \(Layout.time(purchase.updatedAt))"),
        ])
        let content: HTML = """
            \(facts)
            <h2>Timeline</h2>
            \(timeline(story.events))
            <h2>Charges</h2>
            \(charges(story.charges))
            \(story.tokens.isEmpty ? HTML.empty : "<h2>Purchase tokens</h2>\(tokens(story.tokens))")
            <details><summary>The store's last answer, as kept</summary><pre>\(DeadLetterReading.pretty(Data(purchase.snapshot.utf8)))</pre></details>
            """
        return Layout.page("Purchase \(id)", section: .purchases, operatorName: request.operatorName, content)
    }

    private static func stateTag(_ state: String) -> HTML {
        let tone = ["active", "grace"].contains(state) ? "ok" : ["expired", "revoked"].contains(state) ? "bad" : "warn"
        return "<span class=\"tag \(tone)\">\(state)</span>"
    }

    private static func timeline(_ events: [PurchaseStory.Event]) -> HTML {
        guard !events.isEmpty else { return "<p class=\"empty\">No event recorded.</p>" }
        let items = events.reversed().map { event -> HTML in
            let via: HTML = switch (event.source, event.reference) {
            case ("notification", let reference?):
                "notification \(event.storeEvent ?? "") <span class=\"mono\">\(reference)</span>"
            case (let source, let reference?): "\(source) \(event.storeEvent ?? "") · \(reference)"
            case (let source, nil): "\(source) \(event.storeEvent ?? "")"
            }
            return """
                <li><span class="when">\(Layout.time(event.at))</span><span class="what">\(event.kind.replacingOccurrences(of: "_", with: " "))</span>
                <span class="detail">\(via)</span><span class="detail mono">\(event.detail)</span></li>
                """
        }
        return "<ol class=\"timeline\" aria-label=\"Timeline, newest first\">\(items)</ol>"
    }

    private static func charges(_ charges: [PurchaseStory.Charge]) -> HTML {
        Layout.table("Charges, newest first", headers: ["Transaction", "Product", "Amount", "Charged", "Period", "Paid", "Refund"],
                     rows: charges.map { charge in
                         let refund: HTML = charge.refund.map { refund -> HTML in
                             let reversed: HTML = refund.reversedAt.map { "reversed \(Layout.time($0))" } ?? .empty
                             return "\(Layout.money(refund.amount)) \(refund.kind) \(Layout.time(refund.refundedAt)) \(reversed)"
                         } ?? "—"
                         return ["<span class=\"mono\">\(charge.transactionID)</span>", "\(charge.productID)",
                                 "\(Layout.money(charge.amount))", Layout.time(charge.issuedAt),
                                 "\(Layout.time(charge.periodStart)) – \(Layout.time(charge.periodEnd))",
                                 charge.paid ? "yes" : "no", refund]
                     }, empty: "No charge booked.")
    }

    private static func tokens(_ tokens: [PurchaseStory.Token]) -> HTML {
        Layout.table("Purchase tokens, oldest first", headers: ["Token", "Replaced by", "Acknowledged", "First seen"],
                     rows: tokens.map { token in
                         [Layout.clipped(token.token, 40), Layout.clipped(token.replacedBy ?? "— (current)", 40),
                          Layout.time(token.acknowledgedAt), Layout.time(token.createdAt)]
                     }, empty: "No token recorded.")
    }
}
