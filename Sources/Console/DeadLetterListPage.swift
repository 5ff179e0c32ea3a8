import Foundation
import HTTP
import Postgres
import Queue

/// `GET /dead-letters`: the dead letters a filter takes, newest first, a page at a time, with the forms that retry
/// or discard the ones ticked or all the filter takes, and what colleagues did last.
enum DeadLetterListPage {
    static let pageSize = Console.deadLettersPerPage

    static func render(_ console: Console, _ request: ConsoleRequest) async throws -> HTTPResponse {
        let filter: DeadLetterFilter
        do {
            filter = try DeadLetterFilter(request.parameter)
        } catch {
            return Layout.problem(400, "Cannot filter by that: \(error.message).", operatorName: request.operatorName)
        }
        let page = request.parameter("page").flatMap { Int($0) }.map { min(max($0, 1), 100_000) } ?? 1
        let deadLetters = DeadLetters(pool: console.pool)
        let resolved = try await filter.resolved(pool: console.pool)
        let (entries, (total, newest)): ([DeadLetters.Entry], (Int, Date?)) = if let resolved {
            (try await deadLetters.list(resolved, offset: (page - 1) * pageSize, limit: pageSize),
             try await deadLetters.count(resolved))
        } else {
            ([], (0, nil))
        }
        let kinds = try await deadLetters.kinds()
        let actions = try await console.pool.query(OperatorActions.latest(limit: 10))
        let now = Date()
        let rows = entries.map { entry -> [HTML] in
            [
                "<input type=\"checkbox\" name=\"id\" value=\"\(entry.id)\" aria-label=\"Select dead letter \(entry.id)\">",
                "<a href=\"/dead-letters/\(entry.id)\">\(entry.id)</a>",
                "\(entry.kind)",
                "\(entry.accountID.map(String.init) ?? entry.connectionID.map { "connection \($0)" } ?? "—")",
                "\(entry.attempts)",
                "<span title=\"\(entry.deadAt.formatted(.iso8601))\">\(Layout.age(entry.deadAt, now: now)) ago</span>",
                Layout.clipped(entry.reason),
            ]
        }
        let shown = entries.isEmpty ? "" : "\((page - 1) * pageSize + 1)–\((page - 1) * pageSize + entries.count) of "
        let content: HTML = """
            \(filterForm(filter, kinds: kinds))
            <p>\(shown)\(total) dead letter\(total == 1 ? "" : "s")\(filter.isEmpty ? "" : " match").</p>
            <form id="bulk" method="post" action="/dead-letters/actions">
            \(console.csrfField(for: request.operatorName))\(filter.hiddenInputs(newest: newest))
            <div class="actions">
            <label><input type="checkbox" data-select-all> All on this page</label>
            <button name="action" value="retry" data-needs-selection data-confirm="Retry the {n} ticked dead letters?">Retry ticked</button>
            <button name="action" value="discard" class="danger" data-needs-selection data-confirm="Discard the {n} ticked dead letters for good?">Discard ticked</button>
            \(total > 0 ? bulkAllButtons(total) : .empty)
            </div>
            \(Layout.table("Dead letters, newest first", headers: ["", "ID", "Kind", "Account", "Attempts", "Died", "Reason"],
                           rows: rows, empty: filter.isEmpty ? "No dead letters: nothing is waiting for on-call." : "No dead letter matches."))
            </form>
            \(pager(filter, page: page, total: total))
            <h2>Latest actions</h2>
            \(Layout.table("What on-call did last", headers: ["When", "Who", "Action", "Dead letter", "Result"],
                           rows: actions.map { action in
                               ["\(Layout.age(action.at, now: now)) ago", "\(action.operatorName)", "\(action.action)",
                                "\(action.deadLetterID) (\(action.kind))", Layout.clipped(action.result, 60)]
                           }, empty: "Nothing yet."))
            """
        return Layout.page("Dead letters", section: .deadLetters, operatorName: request.operatorName,
                           notice: notice(request), content)
    }

    private static func bulkAllButtons(_ total: Int) -> HTML {
        let count = min(total, DeadLetterActions.maxPerAction)
        let what = total > count ? "the newest \(count) of the \(total)" : "all \(total)"
        return """
            <button name="action" value="retry-all" class="quiet" data-confirm="Retry \(what) dead letters this filter shows?">Retry \(what)</button>
            <button name="action" value="discard-all" class="quiet" data-confirm="Discard \(what) dead letters this filter shows, for good?">Discard \(what)</button>
            """
    }

    private static func filterForm(_ filter: DeadLetterFilter, kinds: [String]) -> HTML {
        func option(_ value: String, _ label: String, selected: String?) -> HTML {
            value == (selected ?? "") ? "<option value=\"\(value)\" selected>\(label)</option>"
                : "<option value=\"\(value)\">\(label)</option>"
        }
        let kindOptions = HTML([option("", "any", selected: filter.kind)] + kinds.map { option($0, $0, selected: filter.kind) })
        let storeOptions = HTML([("", "any"), ("apple", "App Store"), ("google", "Google Play")].map {
            option($0.0, $0.1, selected: filter.store)
        })
        let ageOptions = HTML([option("", "any time", selected: filter.age)]
                              + DeadLetterFilter.ages.map { option($0.value, $0.label, selected: filter.age) })
        return """
            <form class="filters" method="get" action="/dead-letters" role="search">
            <label>Kind <select name="kind">\(kindOptions)</select></label>
            <label>Store <select name="store">\(storeOptions)</select></label>
            <label>Account (id or host) <input name="account" value="\(filter.account)" size="18"></label>
            <label>Reason contains <input name="reason" value="\(filter.reason)" size="22"></label>
            <label>Died <select name="age">\(ageOptions)</select></label>
            <button type="submit">Filter</button>
            <a href="/dead-letters">Clear</a>
            </form>
            """
    }

    private static func pager(_ filter: DeadLetterFilter, page: Int, total: Int) -> HTML {
        let pages = max(1, (total + pageSize - 1) / pageSize)
        guard pages > 1 else { return .empty }
        func link(_ target: Int, _ label: String) -> HTML {
            "<a href=\"\(Layout.link("/dead-letters", filter.fields + [("page", String(target))]))\">\(label)</a>"
        }
        return """
            <nav class="pager" aria-label="Pages">\(page > 1 ? link(page - 1, "← Newer") : .empty)
            <span>Page \(page) of \(pages)</span>\(page < pages ? link(page + 1, "Older →") : .empty)</nav>
            """
    }

    /// What the last action did, from the codes its redirect carries (never text taken from the link).
    static func notice(_ request: ConsoleRequest) -> String? {
        let count = { (name: String) in request.parameter(name).flatMap { Int($0) } ?? 0 }
        switch request.parameter("done") {
        case "retry":
            let kept = count("kept")
            return "\(count("count")) dead letter(s) back in the queue."
                + (kept > 0 ? " \(kept) kept: a pending job already has the same unique key." : "")
                + (count("missing") > 0 ? " \(count("missing")) were already gone." : "")
        case "discard":
            return "\(count("count")) dead letter(s) discarded." + (count("missing") > 0 ? " \(count("missing")) were already gone." : "")
        default:
            return nil
        }
    }
}
