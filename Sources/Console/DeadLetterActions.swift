import Accounts
import Foundation
import HTTP
import Mirror
import Postgres
import Queue

/// Retry and discard, of one dead letter, the ones ticked, or all a filter shows. Each asks first — in a dialog when
/// the page's script runs, on a page of its own when it does not — and each dead letter retried or discarded is
/// recorded in the same transaction: in `operator_actions` with who did it, and on the timeline of the purchase it
/// concerns.
enum DeadLetterActions {
    /// Most dead letters one action takes: a larger backlog is worked through a filter at a time, each commit short.
    static let maxPerAction = 1_000

    /// `POST /dead-letters/actions`: `action` is retry or discard (the ticked `id`s), or retry-all or discard-all
    /// (what the form's filter fields take).
    static func perform(_ console: Console, _ request: ConsoleRequest) async throws -> HTTPResponse {
        let name = request.field("action") ?? ""
        guard let action = OperatorActions.Action(rawValue: name.replacingOccurrences(of: "-all", with: "")) else {
            return Layout.problem(400, "Say retry or discard.", operatorName: request.operatorName)
        }
        let ids: [Int64]
        let filter: DeadLetterFilter
        do {
            filter = try DeadLetterFilter(request.field)
        } catch {
            return Layout.problem(400, "Cannot filter by that: \(error.message).", operatorName: request.operatorName)
        }
        if name.hasSuffix("-all") {
            guard filter.diedBy != nil else {
                return Layout.problem(400, "Acting on all a filter shows needs the page it was shown on: reload it and try again.",
                                      operatorName: request.operatorName)
            }
            guard let resolved = try await filter.resolved(pool: console.pool) else {
                return Layout.redirect(to: Layout.link("/dead-letters", filter.fields))
            }
            ids = try await DeadLetters(pool: console.pool).ids(resolved, limit: maxPerAction)
        } else {
            let given = request.fields("id")
            var seen = Set<Int64>()
            ids = given.compactMap { Int64($0) }.filter { seen.insert($0).inserted }
            guard ids.count == given.count, (1...maxPerAction).contains(ids.count) else {
                return Layout.problem(400, "Tick 1 to \(maxPerAction) dead letters, each once.", operatorName: request.operatorName)
            }
        }
        let back = Layout.link("/dead-letters", filter.fields)
        guard request.field("confirmed") == "yes" else {
            return confirmation(action, ids: ids, request: request, console: console, cancel: back)
        }
        let counts = try await run(action, ids: ids, by: request.operatorName, console: console)
        return Layout.redirect(to: Layout.link("/dead-letters", filter.fields + counts))
    }

    /// `POST /dead-letters/{id}/retry` and `…/discard`.
    static func performOne(_ console: Console, _ request: ConsoleRequest) async throws -> HTTPResponse {
        let path = request.http.path
        guard let action = [OperatorActions.Action.retry, .discard].first(where: { path.hasSuffix("/\($0.rawValue)") }),
              let id = request.pathID(after: "/dead-letters/", suffix: "/\(action.rawValue)") else {
            return Layout.problem(404, "There is no action at \(path.prefix(200)).", operatorName: request.operatorName)
        }
        guard request.field("confirmed") == "yes" else {
            return confirmation(action, ids: [id], request: request, console: console, cancel: "/dead-letters/\(id)")
        }
        let counts = try await run(action, ids: [id], by: request.operatorName, console: console)
        return Layout.redirect(to: Layout.link("/dead-letters", counts))
    }

    /// The page that asks when the page's script did not: the same form again, confirmed.
    private static func confirmation(_ action: OperatorActions.Action, ids: [Int64], request: ConsoleRequest, console: Console,
                                     cancel: String) -> HTTPResponse {
        let verb = action == .retry ? "Retry" : "Discard"
        let what = ids.count == 1 ? "dead letter \(ids[0])" : "these \(ids.count) dead letters"
        let consequence = action == .retry ? "They go back in the queue under the same ids, due now, with fresh attempts."
            : "They are deleted for good; the record of who discarded them stays."
        let fields = HTML(request.form.filter { !["csrf", "confirmed"].contains($0.name) }.map { field -> HTML in
            "<input type=\"hidden\" name=\"\(field.name)\" value=\"\(field.value)\">"
        })
        let listed = ids.count == 1 && request.field("action") == nil ? HTML.empty
            : "<p class=\"mono\">\(ids.prefix(50).map(String.init).joined(separator: ", "))\(ids.count > 50 ? ", …" : "")</p>"
        let content: HTML = """
            <p>\(verb) \(what)? \(consequence)</p>
            \(listed)
            <form method="post" action="\(request.http.path)">\(console.csrfField(for: request.operatorName))\(fields)
            <input type="hidden" name="confirmed" value="yes">
            <div class="actions"><button class="\(action == .discard ? "danger" : "")">Yes, \(verb.lowercased())</button>
            <a href="\(cancel)">Cancel</a></div></form>
            """
        return Layout.page("\(verb) \(what)?", section: .deadLetters, operatorName: request.operatorName, content)
    }

    /// Does `action` to `ids` and records it, in one transaction; returns the counts the list's notice shows.
    private static func run(_ action: OperatorActions.Action, ids: [Int64], by operatorName: String,
                            console: Console) async throws -> [(String, String?)] {
        let logger = console.logger
        return try await console.pool.transaction { db in
            let details = try DeadLetters.details(ids: ids, on: db)
            var trusts: [Int64: HostTrust] = [:]
            var purchases: [Int64: Int64] = [:]
            for detail in details {
                var trust: HostTrust?
                if let account = detail.entry.accountID {
                    if trusts[account] == nil { trusts[account] = try db.query(HostTrust.loading(accountID: account)) }
                    trust = trusts[account]
                }
                if let reference = DeadLetterReading(detail, trust: trust).reference,
                   let purchase = try PurchaseSearch.purchaseID(reference, on: db) {
                    purchases[detail.entry.id] = purchase
                }
            }
            var done: [Int64: String] = [:]
            var kept = 0
            switch action {
            case .retry:
                for (id, result) in try DeadLetters.retry(ids: ids, on: db) {
                    switch result {
                    case .requeued: done[id] = "requeued"
                    case .duplicateUniqueKey(let key):
                        kept += 1
                        try OperatorActions.record(.retry, by: operatorName, deadLetterID: id, kind: kind(of: id, details),
                                                   result: "kept: a pending job already has unique key \(key)",
                                                   purchaseID: purchases[id], on: db)
                    case .notFound: break
                    }
                }
            case .discard:
                for id in try DeadLetters.discard(ids: ids, on: db) { done[id] = "discarded" }
            }
            for (id, result) in done {
                let kind = kind(of: id, details)
                try OperatorActions.record(action, by: operatorName, deadLetterID: id, kind: kind, result: result,
                                           purchaseID: purchases[id], on: db)
                if let purchase = purchases[id] {
                    try PurchaseStory.recordOperatorAction(action.rawValue, by: operatorName, deadLetterID: id, kind: kind,
                                                           purchaseID: purchase, on: db)
                }
            }
            logger.info("dead letters \(action.rawValue)", ["operator": .string(operatorName), "done": .int(done.count),
                                                            "kept": .int(kept), "asked": .int(ids.count)])
            return [("done", action.rawValue), ("count", String(done.count)), ("kept", kept > 0 ? String(kept) : nil),
                    ("missing", ids.count - done.count - kept > 0 ? String(ids.count - done.count - kept) : nil)]
        }
    }

    private static func kind(of id: Int64, _ details: [DeadLetters.Detail]) -> String {
        details.first { $0.entry.id == id }?.entry.kind ?? "unknown"
    }
}
