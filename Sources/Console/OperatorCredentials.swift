import Accounts
import Crypto
import Foundation

/// Who may use a console that listens beyond loopback: operators' names with their passwords kept only as
/// PBKDF2-HMAC-SHA-256 hashes, one `name:pbkdf2-sha256$ITERATIONS$SALT$HASH` line each (salt and hash in
/// base64url), as `storesync console add-operator` writes them. A file that is missing, unreadable, empty or has
/// one malformed line is refused as a whole, at start, naming the line — never half-read.
public struct OperatorCredentials: Sendable {
    /// One operator's stored hash.
    struct Entry: Sendable {
        let salt: Data
        let iterations: Int
        let hash: Data
    }

    private let entries: [String: Entry]

    /// Largest file read: thousands of operators fit; anything larger is not this file.
    static let maxFileBytes = 64 * 1024
    static let scheme = "pbkdf2-sha256"

    public var operatorNames: [String] { entries.keys.sorted() }

    public init(contentsOf path: String) throws(ConsoleError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ConsoleError(.invalidCredentials, "cannot read the credentials file \(path)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: Self.maxFileBytes + 1)) ?? Data()
        guard data.count <= Self.maxFileBytes else {
            throw ConsoleError(.invalidCredentials, "the credentials file \(path) is larger than \(Self.maxFileBytes) bytes")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConsoleError(.invalidCredentials, "the credentials file \(path) is not UTF-8")
        }
        try self.init(text: text, source: path)
    }

    init(text: String, source: String) throws(ConsoleError) {
        var entries: [String: Entry] = [:]
        // Any line ending: a file written on Windows (CRLF, one Character in Swift) reads the same.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = line.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let place = "\(source) line \(index + 1)"
            guard let colon = line.firstIndex(of: ":") else {
                throw ConsoleError(.invalidCredentials, "\(place) is not NAME:\(Self.scheme)$ITERATIONS$SALT$HASH")
            }
            let name = String(line[..<colon])
            guard Self.isValidName(name) else {
                throw ConsoleError(.invalidCredentials, "\(place): an operator name is 1 to 64 visible ASCII characters without ':'")
            }
            guard entries[name] == nil else { throw ConsoleError(.invalidCredentials, "\(place) names \(name) a second time") }
            let fields = line[line.index(after: colon)...].split(separator: "$", omittingEmptySubsequences: false)
            guard fields.count == 4, fields[0] == Self.scheme, let iterations = Int(fields[1]),
                  (PasswordHash.minIterations...PasswordHash.maxIterations).contains(iterations),
                  let salt = try? Base64URL.decode(fields[2]), salt.count >= 16,
                  let hash = try? Base64URL.decode(fields[3]), hash.count == 32 else {
                throw ConsoleError(.invalidCredentials, "\(place): the hash is not \(Self.scheme)$ITERATIONS$SALT$HASH "
                                   + "(base64url, a salt of 16 bytes or more, a 32-byte hash)")
            }
            entries[name] = Entry(salt: salt, iterations: iterations, hash: hash)
        }
        guard !entries.isEmpty else { throw ConsoleError(.invalidCredentials, "\(source) names no operator") }
        self.entries = entries
    }

    /// Whether `password` is `name`'s. An unknown name costs the same work as a known one, and the hashes are
    /// compared in constant time, so neither time nor answer tells which names exist.
    func accepts(name: String, password: String) -> Bool {
        let entry = entries[name]
        let known = entry ?? Self.decoy
        guard let derived = try? PasswordHash.pbkdf2(Data(password.utf8), salt: known.salt, iterations: known.iterations)
        else { return false }
        return ConstantTime.equal(derived, known.hash) && entry != nil
    }

    /// What an unknown name is checked against.
    private static let decoy = Entry(salt: Data(repeating: 0x5A, count: 16), iterations: PasswordHash.defaultIterations,
                                     hash: Data(repeating: 0, count: 32))

    /// One line of the file for `name` and `password`, with a fresh random salt.
    public static func line(name: String, password: String,
                            iterations: Int = PasswordHash.defaultIterations) throws(ConsoleError) -> String {
        guard isValidName(name) else {
            throw ConsoleError(.invalidCredentials, "an operator name is 1 to 64 visible ASCII characters without ':'")
        }
        guard (8...1024).contains(password.utf8.count) else {
            throw ConsoleError(.invalidCredentials, "a password is 8 to 1024 bytes")
        }
        var generator = SystemRandomNumberGenerator()
        let salt = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        guard let hash = try? PasswordHash.pbkdf2(Data(password.utf8), salt: salt, iterations: iterations) else {
            throw ConsoleError(.invalidCredentials, "cannot hash with \(iterations) iterations")
        }
        return "\(name):\(scheme)$\(iterations)$\(Base64URL.encode(salt))$\(Base64URL.encode(hash))"
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ":") }
    }
}
