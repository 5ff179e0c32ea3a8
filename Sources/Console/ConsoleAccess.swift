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
    /// Failed checks allowed per address and minute.
    static let failuresPerMinute = 10
    /// Entries kept in either table; beyond, the table starts again (a flood costs only PBKDF2 checks).
    static let maxEntries = 10_000

    init(credentials: OperatorCredentials?, localOperator: String) {
        self.credentials = credentials
        self.localOperator = localOperator
        var generator = SystemRandomNumberGenerator()
        cacheKey = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    func decide(_ request: HTTPRequest) -> Decision {
        guard let credentials else { return .allowed(operatorName: localOperator) }
        let address = request.peerAddress ?? "unknown"
        let now = ContinuousClock.now
        if isLimited(address, now: now) {
            return .refused(Self.refusal(429, "Too many failed logins from this address; wait a minute.",
                                         headers: [("Retry-After", "60")]))
        }
        guard let header = request.header("authorization"), let (name, password) = Self.basic(header) else {
            return .refused(Self.challenge)
        }
        let key = HMACSHA256.tag(Data(header.utf8), key: cacheKey)
        if let until = accepted.withLock({ $0[key] }), now < until { return .allowed(operatorName: name) }
        guard credentials.accepts(name: name, password: password) else {
            recordFailure(address, now: now)
            return .refused(Self.challenge)
        }
        accepted.withLock { table in
            if table.count >= Self.maxEntries { table = table.filter { now < $0.value } }
            if table.count >= Self.maxEntries { table.removeAll() }
            table[key] = now + Self.acceptedLifetime
        }
        return .allowed(operatorName: name)
    }

    private func isLimited(_ address: String, now: ContinuousClock.Instant) -> Bool {
        failures.withLock { table in
            guard let entry = table[address] else { return false }
            if now - entry.since >= .seconds(60) {
                table[address] = nil
                return false
            }
            return entry.count >= Self.failuresPerMinute
        }
    }

    private func recordFailure(_ address: String, now: ContinuousClock.Instant) {
        failures.withLock { table in
            if table.count >= Self.maxEntries { table.removeAll() }
            let entry = table[address].flatMap { now - $0.since < .seconds(60) ? $0 : nil } ?? (count: 0, since: now)
            table[address] = (entry.count + 1, entry.since)
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
