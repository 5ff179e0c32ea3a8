import CPostgres
import Foundation

/// A libpq connection string — a `postgresql://` URI or `key=value` pairs — read the way libpq reads it, so a
/// malformed one is a configuration error found before anything starts, and its password never reaches a
/// message: libpq quotes the whole string back in its parse errors.
public enum ConnectionString {
    private static let redacted = "[redacted]"

    /// Refuses a string libpq cannot parse, with libpq's reason minus the credentials, as
    /// `PostgresError.invalidConnectionString` — not a lost connection, since connecting again cannot help.
    /// Parses only: no defaults, no service file, no network, so it never blocks.
    public static func validate(_ text: String) throws {
        // Neither a URI nor key=value: libpq takes the whole value as a database name.
        guard text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") || text.contains("=") else { return }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &error) else {
            let reason = error.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "out of memory"
            if let error { PQfreemem(error) }
            throw PostgresError(.invalidConnectionString, message: redact(reason, secretsOf: text))
        }
        PQconninfoFree(options)
    }

    /// `message` with the credentials of `connectionString` replaced by `[redacted]`: its password, and each
    /// piece of it libpq may quote on its own, wherever they appear (libpq may quote just the bad part, e.g. an
    /// invalid percent-encoding in it), and any URI `user:password@` or `password=…` in the text.
    public static func redact(_ message: String, secretsOf connectionString: String) -> String {
        var text = message
        let forms = secrets(in: connectionString).flatMap { [$0, $0.removingPercentEncoding].compactMap { $0 } }
        // Longest first, so a piece never splits a longer secret before that is replaced whole.
        for form in Set(forms).sorted(by: { $0.count > $1.count }) where form.count >= 2 {
            text = text.replacingOccurrences(of: form, with: redacted)
        }
        text = text.replacingOccurrences(of: #"(://[^:/@\s"]*):[^\s"]*@"#, with: "$1:\(redacted)@",
                                         options: .regularExpression)
        return text.replacingOccurrences(of: #"(password\s*=\s*)('([^'\\]|\\.)*'?|[^\s&"']+)"#, with: "$1\(redacted)",
                                         options: [.regularExpression, .caseInsensitive])
    }

    /// The secrets `connectionString` holds: the URI's password as written — between the first `:` of the user
    /// info and its last `@` — with the pieces its `@`, `/`, `?`, `#` and `:` separate (libpq ends the user info
    /// at the first `@` or `/`, so a password holding one is parsed, and quoted back, in pieces: part as the
    /// host, part as the port); and the value of every `password=` (a URI query parameter or a key=value pair,
    /// quoted or not).
    private static func secrets(in connectionString: String) -> [String] {
        var found: [String] = []
        if let scheme = connectionString.range(of: "://") {
            let rest = connectionString[scheme.upperBound...]
            if let at = rest.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                let password = rest[rest.index(after: colon)..<at]
                found.append(String(password))
                found += password.split(whereSeparator: { "@/?#:".contains($0) }).map(String.init)
            }
        }
        var rest = connectionString[...]
        while let key = rest.range(of: #"password\s*=\s*"#, options: [.regularExpression, .caseInsensitive]) {
            rest = rest[key.upperBound...]
            let value: Substring
            if rest.first == "'" {
                var escaped = false
                let body = rest.dropFirst().prefix { character in
                    defer { escaped = !escaped && character == "\\" }
                    return escaped || character != "'"
                }
                value = body
            } else {
                value = rest.prefix { !$0.isWhitespace && $0 != "&" }
            }
            found.append(String(value))
            rest = rest[value.endIndex...]
        }
        return found
    }
}
