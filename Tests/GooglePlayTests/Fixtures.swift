import Crypto
import Foundation
import GooglePlay
import Synchronization
import TestSupport

/// Keys generated once per test process: RSA generation takes a noticeable fraction of a second.
enum TestKeys {
    static let a = try! PrivateKey.generate(.rsa(bits: 2048))
    static let b = try! PrivateKey.generate(.rsa(bits: 2048))
}

/// A JWKS publishing `keys` by kid, the way Google's certs endpoint does.
func jwks(_ keys: [(kid: String, key: PrivateKey)]) throws -> Data {
    let entries = try keys.map { kid, key in try key.publicKey.jwk(kid: kid) }
    return try JSONSerialization.data(withJSONObject: ["keys": entries], options: [.sortedKeys])
}

/// Serves scripted key sets in order (repeating the last) and counts fetches. With a gate, a fetch is held
/// open until that many callers have started, so concurrent callers overlap it.
actor ScriptedFetcher: JWKSFetcher {
    private var documents: [Result<JWKSDocument, any Error>]
    private(set) var fetchCount = 0
    private let gate: (started: Counter, count: Int)?

    init(_ documents: [Result<JWKSDocument, any Error>], gate: (started: Counter, count: Int)? = nil) {
        self.documents = documents
        self.gate = gate
    }

    init(keySets: [Data], maxAge: Duration? = nil) {
        self.init(keySets.map { .success(JWKSDocument(json: $0, maxAge: maxAge)) })
    }

    func fetchKeySet() async throws -> JWKSDocument {
        fetchCount += 1
        let next = documents.count > 1 ? documents.removeFirst() : documents[0]
        if let gate {
            let deadline = ContinuousClock.now + .seconds(10)
            while gate.started.value < gate.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            try await Task.sleep(for: .milliseconds(50))  // let the last starters reach the cache
        }
        return try next.get()
    }
}

struct FetchFailed: Error {}

/// A clock tests move by hand, shared by the cache and the verifier.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }

    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var closure: @Sendable () -> Date { { self.now } }
}

/// Push-token parts with Google's values; tests change one field at a time.
struct TokenSpec {
    static let audience = "https://storesync.example.com/google/push"
    static let email = "pubsub-push@storesync-prod.iam.gserviceaccount.com"

    var header: [String: Any] = ["alg": "RS256", "kid": "key-a", "typ": "JWT"]
    var claims: [String: Any]
    var key = TestKeys.a

    init(now: Date) {
        let iat = Int(now.timeIntervalSince1970)
        claims = ["iss": "https://accounts.google.com", "aud": Self.audience, "email": Self.email,
                  "email_verified": true, "iat": iat, "exp": iat + 3600, "sub": "112233445566778899000",
                  "azp": "112233445566778899000"]
    }

    /// Signed with RS256 whatever the header says, so an `alg` mismatch is the only thing wrong with it.
    func token() throws -> String {
        let header = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try SignatureAlgorithm.rs256.sign(Data(input.utf8), with: key))
    }

    func authorization() throws -> String { "Bearer " + (try token()) }
}
