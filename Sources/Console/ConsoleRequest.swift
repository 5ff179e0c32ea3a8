import Foundation
import HTTP

/// A request as a page sees it: who makes it, and its query and form fields, decoded once.
struct ConsoleRequest: Sendable {
    let http: HTTPRequest
    let operatorName: String
    let query: [(name: String, value: String)]
    let form: [(name: String, value: String)]

    /// Nil when the query or a form body is not valid `application/x-www-form-urlencoded` UTF-8.
    init?(_ http: HTTPRequest, operatorName: String) {
        guard let query = PercentEncoding.decodeForm(Array((http.query ?? "").utf8)) else { return nil }
        var form: [(name: String, value: String)] = []
        if http.method == "POST" {
            let type = http.header("content-type")?.lowercased() ?? ""
            guard type.hasPrefix("application/x-www-form-urlencoded"),
                  let fields = PercentEncoding.decodeForm(http.body) else { return nil }
            form = fields
        }
        self.http = http
        self.operatorName = operatorName
        self.query = query
        self.form = form
    }

    /// A query parameter, trimmed, nil when absent or empty.
    func parameter(_ name: String) -> String? {
        query.first { $0.name == name }.map { $0.value.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A form field, trimmed, nil when absent or empty.
    func field(_ name: String) -> String? {
        form.first { $0.name == name }.map { $0.value.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    func fields(_ name: String) -> [String] {
        form.filter { $0.name == name }.map(\.value)
    }

    /// The id at the end of a path under `prefix` (`/dead-letters/42` → 42), with `suffix` after it if given.
    func pathID(after prefix: String, suffix: String = "") -> Int64? {
        let path = http.path
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else { return nil }
        let text = path.dropFirst(prefix.count).dropLast(suffix.count)
        guard text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }
}
