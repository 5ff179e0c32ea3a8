import Accounts
import Foundation
import HTTP
import Postgres
import StoreModel

/// A setup command that was understood but could not be carried out (a missing record, a duplicate):
/// printed as one line, exit status 1.
package struct SetupError: Error, CustomStringConvertible, Sendable {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The account, connection, customer or token named on the command line does not exist.
        package static let notFound = Code("not found")
        /// The record would duplicate one that exists (a unique constraint said so).
        package static let alreadyExists = Code("already exists")
        /// The records named exist but do not go together (an option that does not apply to the store).
        package static let mismatch = Code("mismatch")
        package var description: String { name }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}

/// Parsers for the setup commands' arguments (accounts, connections, catalogue, customers, tokens), each
/// naming the option in its error and bounding what it accepts.
extension Parse {
    /// Plan, price and entitlement codes, as the catalogue tables constrain them.
    static func code(_ text: String, _ name: String) throws -> String {
        guard Parse.matches(text, "[A-Za-z0-9._-]{1,100}") else {
            throw UsageError("\(name) must be 1…100 of A-Z a-z 0-9 . _ -, got \(quoted(text))")
        }
        return text
    }

    /// A positive database id (connections, plan prices).
    static func id(_ text: String, _ name: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else { throw UsageError("\(name) must be a positive integer id, got \(quoted(text))") }
        return id
    }

    /// A UUID (customer ids, account tokens), normalised to lowercase as PostgreSQL prints it.
    static func uuid(_ text: String, _ name: String) throws -> String {
        guard text.utf8.count == 36, let uuid = UUID(uuidString: text) else {
            throw UsageError("\(name) must be a UUID, got \(quoted(text))")
        }
        return uuid.uuidString.lowercased()
    }

    static func onOff(_ text: String, _ name: String) throws -> Bool {
        switch text {
        case "on": return true
        case "off": return false
        default: throw UsageError("\(name) must be on or off, got \(quoted(text))")
        }
    }

    /// Free text stored as given (names, product ids): 1…`maxBytes` bytes without control characters.
    static func text(_ text: String, _ name: String, maxBytes: Int) throws -> String {
        guard !text.isEmpty, text.utf8.count <= maxBytes,
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw UsageError("\(name) must be 1…\(maxBytes) bytes without control characters, got \(quoted(text))")
        }
        return text
    }

    /// A display name (accounts, customers): at most `maxCharacters` Unicode code points — what PostgreSQL's
    /// `length()` counts in the tables' CHECKs, so a name the CLI accepts is never refused by the database
    /// (a letter with 300 combining accents is one Swift Character but 301 code points) — without control
    /// characters.
    static func name(_ text: String, _ name: String, maxCharacters: Int) throws -> String {
        guard text.unicodeScalars.count <= maxCharacters,
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw UsageError("\(name) must be at most \(maxCharacters) characters (Unicode code points) without control "
                             + "characters, got \(quoted(text))")
        }
        return text
    }

    /// A DNS host name without port, lowercased as the accounts table keeps it (`HostName`). All digits is refused:
    /// `--account 123` means the account with id 123, so such a host could never be named.
    package static func host(_ text: String, _ name: String) throws -> String {
        guard let host = HostName.normalized(Substring(text)), Int64(host) == nil else {
            throw UsageError("\(name) must be a host name like billing.example.com (dot-separated labels of 1…63 letters, "
                             + "digits and hyphens, not starting or ending with a hyphen), got \(quoted(text))")
        }
        return host
    }

    /// An ISO 4217 code (`usd` is taken as `USD`).
    static func currency(_ text: String) throws -> String {
        let code = text.uppercased()
        guard Parse.matches(code, "[A-Z]{3}") else {
            throw UsageError("--currency must be a three-letter ISO 4217 code like USD, got \(quoted(text))")
        }
        return code
    }

    /// A decimal amount such as `9.99`, read exactly into minor units of `currency`: never through floating
    /// point, and never rounded — more decimals than the currency has is refused, because the price would
    /// not be what the operator typed.
    static func amount(_ text: String, currency: String) throws -> Money {
        guard Parse.matches(text, "[0-9]{1,18}(\\.[0-9]{1,18})?") else {
            throw UsageError("--amount must be a non-negative decimal number like 9.99, got \(quoted(text))")
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let fraction = parts.count == 2 ? String(parts[1]) : ""
        let exponent = Money.exponent(of: currency)
        guard fraction.count <= exponent else {
            throw UsageError("--amount \(text) has more decimals than \(currency) allows (\(exponent))")
        }
        let digits = String(parts[0]) + fraction + String(repeating: "0", count: exponent - fraction.count)
        guard let minorUnits = Int64(digits) else { throw UsageError("--amount \(text) is too large") }
        return Money(minorUnits: minorUnits, currency: currency)
    }

    /// `--account`: an account id, or the host its webhooks arrive on.
    static func account(_ text: String) throws -> AccountReference {
        if let id = Int64(text) {
            guard id > 0 else { throw UsageError("--account must be an account id or host, got \(quoted(text))") }
            return .id(id)
        }
        let host = text.lowercased()
        guard host.utf8.count <= 253, !host.isEmpty,
              host.utf8.allSatisfy({ $0 == 0x2e || $0 == 0x2d || (0x30...0x39).contains($0) || (0x61...0x7a).contains($0) })
        else { throw UsageError("--account must be an account id or host, got \(quoted(text))") }
        return .host(host)
    }

    /// Reads a small file whole, refusing one larger than `limit` bytes.
    package static func file(_ path: String, _ name: String, limit: Int) throws -> Data {
        let shown = redacted(path) ?? path
        guard let handle = FileHandle(forReadingAtPath: path) else { throw UsageError("cannot read \(name) file \(shown)") }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw UsageError("cannot read \(name) file \(shown): \(error.localizedDescription)")
        }
        guard data.count <= limit else { throw UsageError("\(name) file \(shown) is larger than \(limit) bytes") }
        return data
    }

    /// Echoes a bad value back, cut short so a pasted file cannot flood the terminal (`redacted` when it is one).
    package static func quoted(_ text: String) -> String {
        redacted(text) ?? (text.count > 64 ? String(text.prefix(64)).debugDescription + "…" : text.debugDescription)
    }

    /// What to show instead of a value that looks like a key or a service-account JSON pasted where a file name
    /// belongs: its contents must not reach a terminal's scrollback or a CI log. Nil for anything else.
    static func redacted(_ text: String) -> String? {
        guard text.contains("-----BEGIN") || text.contains("PRIVATE KEY") || text.hasPrefix("{") else { return nil }
        return "(what looks like key contents, not shown: pass a file name, or the key in an environment variable)"
    }

    /// Whether all of `text` matches `pattern`. Anchored with `\A` and `\z`: ICU's `$` also matches before a final
    /// line break, so `^…$` took `ABC123\r` from a CRLF file for a key id, and every call with it failed.
    package static func matches(_ text: String, _ pattern: String) -> Bool {
        text.range(of: "\\A(?:\(pattern))\\z", options: .regularExpression) != nil
    }
}

/// How the command line names an account.
enum AccountReference: Sendable {
    case id(Int64)
    case host(String)

    /// The account's id; fails with `SetupError.notFound` when there is no such account.
    func resolve(on pool: PostgresPool) async throws -> Int64 {
        let found = try await pool.withConnection { db in
            switch self {
            case .id(let id): try await AccountDirectory.exists(id: id, on: db) ? id : nil
            case .host(let host): try await AccountDirectory.id(host: host, on: db)
            }
        }
        guard let id = found else {
            switch self {
            case .id(let id): throw SetupError(.notFound, "no account \(id)")
            case .host(let host): throw SetupError(.notFound, "no account for host \(host)")
            }
        }
        return id
    }
}

extension SetupError {
    /// Turns a unique violation into `alreadyExists` with `message`; other errors pass through.
    static func duplicate<T>(_ message: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError where error.code == .uniqueViolation {
            throw SetupError(.alreadyExists, message)
        }
    }
}

extension SetupError {
    /// `COMMAND revoke ID`, as every revocable credential has it: the id is a UUID, revoking again is fine, and
    /// an id nothing has is "not found". `noun` names the credential in the messages ("account token").
    static func revoke(_ noun: String, _ arguments: inout Arguments, environment: Environment, placeholder: String,
                       _ revoke: @escaping @Sendable (String, isolated PostgresConnection) throws -> Bool) async throws
        -> Int32
    {
        guard let text = arguments.positional() else { throw UsageError("revoke needs a \(placeholder)") }
        try arguments.finish()
        let id = try Parse.uuid(text, placeholder)
        let revoked = try await environment.withPool { pool in try await pool.transaction { db in try revoke(id, db) } }
        guard revoked else { throw SetupError(.notFound, "no \(noun) \(id)") }
        Output.print("\(noun) \(id) revoked")
        return 0
    }
}
