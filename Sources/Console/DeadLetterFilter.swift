import Accounts
import Foundation
import Postgres
import Queue

/// The dead letters page's filters as on-call types them — a kind, a store, an account by id or host, words of the
/// reason, an age — checked, and turned into the queue's `DeadLetters.Filter`. The same fields travel in the list's
/// links and in its bulk forms, so "retry all that this filter shows" takes exactly what the page showed.
struct DeadLetterFilter: Sendable {
    /// The ages offered, as the select shows them.
    static let ages: [(value: String, label: String, duration: Duration)] = [
        ("1h", "last hour", .seconds(3600)), ("24h", "last 24 hours", .seconds(86400)),
        ("7d", "last 7 days", .seconds(7 * 86400)), ("30d", "last 30 days", .seconds(30 * 86400)),
    ]

    var kind: String?
    var store: String?
    /// As typed: an account id or a tenant host.
    var account: String?
    var reason: String?
    var age: String?
    /// The newest dead letter a page showed died then (`DeadLetters.Filter.diedBy`): sent with its forms, never its
    /// links, as microseconds since 1970 (what a timestamp holds).
    var diedBy: Date?

    /// Reads the fields from `value` (the query's parameter or the form's field); a value that cannot be one of
    /// them is refused with what is wrong.
    init(_ value: (String) -> String?) throws(FilterError) {
        kind = value("kind")
        if let kind, JobKind(kind) == nil { throw FilterError("“\(kind.prefix(100))” is not a job kind") }
        store = value("store")
        if let store, !["apple", "google"].contains(store) { throw FilterError("the store is apple or google") }
        account = value("account")
        if let account, account.utf8.count > 253 { throw FilterError("an account is its id or its host") }
        reason = value("reason")
        if let reason, reason.utf8.count > 200 { throw FilterError("search the reason for at most 200 bytes") }
        age = value("age")
        if let age, !Self.ages.contains(where: { $0.value == age }) { throw FilterError("unknown age “\(age.prefix(10))”") }
        if let text = value("died_by") {
            guard let micros = Int64(text), micros > 0 else { throw FilterError("died_by is microseconds since 1970") }
            diedBy = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        }
    }

    struct FilterError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    var isEmpty: Bool { fields.allSatisfy { $0.1 == nil } }

    /// The fields as name–value pairs, for links and hidden inputs.
    var fields: [(String, String?)] {
        [("kind", kind), ("store", store), ("account", account), ("reason", reason), ("age", age)]
    }

    /// The queue's filter, the account read by its id or host; nil when no account has it (nothing matches).
    func resolved(pool: PostgresPool) async throws -> DeadLetters.Filter? {
        var filter = DeadLetters.Filter(kind: kind, store: store, reason: reason,
                                        maxAge: age.flatMap { age in Self.ages.first { $0.value == age }?.duration },
                                        diedBy: diedBy)
        guard let account else { return filter }
        let trust = if let id = Int64(account) {
            try await pool.query(HostTrust.loading(accountID: id))
        } else {
            try await pool.query(HostTrust.loading(host: account.lowercased()))
        }
        guard let trust else { return nil }
        filter.accountID = trust.accountID
        filter.connectionIDs = trust.connections.map(\.id)
        return filter
    }

    /// The fields as hidden inputs, for a form acting on what the filter shows: the filter, and the newest dead letter
    /// shown's time, so "all it shows" never takes one that died after the page was drawn.
    func hiddenInputs(newest: Date?) -> HTML {
        let bound = (newest ?? diedBy).map { String(Int64(($0.timeIntervalSince1970 * 1_000_000).rounded())) }
        return HTML((fields + [("died_by", bound)]).compactMap { name, value in
            value.map { "<input type=\"hidden\" name=\"\(name)\" value=\"\($0)\">" }
        })
    }
}
