import Crypto
import Foundation
import HTTP
import Synchronization

/// Who is using the console. On loopback without a credentials file, whoever reached the port through an SSH
/// tunnel is the local operator; with a credentials file every request carries HTTP Basic credentials.
///
/// A PBKDF2 check costs a good part of a second on purpose, and a browser sends Basic credentials with every
/// request: a successful check is remembered for a while under a keyed hash of the header (never the password
/// itself), and each address may fail only a few times a minute.
final class ConsoleAccess: Sendable {
    enum Decision: Sendable {
        case allowed(operatorName: String)
        case refused(HTTPResponse)
    }

    private let credentials: OperatorCredentials?
    private let localOperator: String
    private let cacheKey: Data
    private let accepted = Mutex<[Data: ContinuousClock.Instant]>([:])
    private let failures = Mutex<[String: (count: Int, since: ContinuousClock.Instant)]>([:])

    /// How long a checked header is believed.
    static let acceptedLifetime: Duration = .seconds(600)
    /// Password checks an address may fail per minute (a check counts until it succeeds).
    static let failuresPerMinute = 10
    /// Entries kept in either table; beyond, the table starts again (a flood costs only PBKDF2 checks).
    static let maxEntries = 10_000

    init(credentials: OperatorCredentials?, localOperator: String) {
        self.credentials = credentials
        self.localOperator = localOperator
        var generator = SystemRandomNumberGenerator()
        cacheKey = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    func decide(_ request: HTTPRequest) async -> Decision {
        guard let credentials else {
            // Without credentials only a loopback name may be asked for: a page elsewhere whose name an attacker
            // points at 127.0.0.1 (DNS rebinding) would otherwise be the console's own origin in on-call's browser.
            guard Self.isLoopbackHost(request.header("host")) else {
                return .refused(Self.refusal(421, "Without credentials the console answers only to a loopback name "
                                             + "(localhost, 127.0.0.1, [::1]).", headers: []))
            }
            return .allowed(operatorName: localOperator)
        }
        guard let header = request.header("authorization"), let (name, password) = Self.basic(header) else {
            return .refused(Self.challenge)
        }
        let now = ContinuousClock.now
        let key = HMACSHA256.tag(Data(header.utf8), key: cacheKey)
        // A login checked a moment ago is believed before any limit applies: behind a proxy every operator shares its
        // address, and one guesser must not lock them all out.
        if let until = accepted.withLock({ $0[key] }), now < until { return .allowed(operatorName: name) }
        let address = request.peerAddress ?? "unknown"
        // Counted before the hash is checked, so guesses sent in parallel are limited too.
        guard takeAttempt(address, now: now) else {
            return .refused(Self.refusal(429, "Too many failed logins from this address; wait a minute.",
                                         headers: [("Retry-After", "60")]))
        }
        guard await Self.offThePool({ credentials.accepts(name: name, password: password) }) else {
            return .refused(Self.challenge)
        }
        forgetAttempts(address)
        accepted.withLock { table in
            if table.count >= Self.maxEntries { table = table.filter { now < $0.value } }
            if table.count >= Self.maxEntries { table.removeAll() }
            table[key] = now + Self.acceptedLifetime
        }
        return .allowed(operatorName: name)
    }

    /// Whether a `Host` header names this machine's loopback: `localhost`, `127.x.x.x` or `[::1]`, any port (an SSH
    /// tunnel's local port may differ from the console's).
    static func isLoopbackHost(_ header: String?) -> Bool {
        guard let header = header?.lowercased(), header.utf8.count <= 300 else { return false }
        let name: Substring
        if header.hasPrefix("[") {
            guard let close = header.firstIndex(of: "]") else { return false }
            name = header[header.index(after: header.startIndex)..<close]
            return name == "::1"
        }
        name = header.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return name == "localhost" || (octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil })
    }

    /// PBKDF2 takes a good part of a second on purpose: on a thread of its own, not one of the concurrency pool's
    /// (two on this kind of machine), so a few logins at once do not stall every page.
    private static func offThePool(_ check: @escaping @Sendable () -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: check()) }.start()
        }
    }

    /// Takes one of the address's attempts for this minute; false when it has none left.
    private func takeAttempt(_ address: String, now: ContinuousClock.Instant) -> Bool {
        failures.withLock { table in
            if table.count >= Self.maxEntries { table.removeAll() }
            let entry = table[address].flatMap { now - $0.since < .seconds(60) ? $0 : nil } ?? (count: 0, since: now)
            guard entry.count < Self.failuresPerMinute else { return false }
            table[address] = (entry.count + 1, entry.since)
            return true
        }
    }

    /// A right password gives its attempt back.
    private func forgetAttempts(_ address: String) {
        failures.withLock { table in
            guard let entry = table[address] else { return }
            table[address] = entry.count <= 1 ? nil : (entry.count - 1, entry.since)
        }
    }

    /// The name and password of a `Basic` header (RFC 7617), or nil for anything else.
    static func basic(_ header: String) -> (String, String)? {
        guard header.utf8.count <= 4096 else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    static let challenge = refusal(401, "Sign in with your operator name and password.",
                                   headers: [("WWW-Authenticate", "Basic realm=\"StoreSync console\", charset=\"UTF-8\"")])

    private static func refusal(_ status: Int, _ message: String, headers: [(name: String, value: String)]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + Layout.securityHeaders + headers,
                     body: Data((message + "\n").utf8))
    }
}
