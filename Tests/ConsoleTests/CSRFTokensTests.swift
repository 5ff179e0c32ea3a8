@testable import Console
import Crypto
import Foundation
import Testing

/// A form's token is accepted for the operator it was issued to, by the process that issued it, for its lifetime;
/// anything else is refused.
@Suite struct CSRFTokensTests {
    let tokens = CSRFTokens()
    let now = Date()

    @Test func aTokenIsAcceptedForItsOperatorOnly() {
        let token = tokens.issue(for: "alice", at: now)
        #expect(tokens.accepts(token, for: "alice", at: now))
        #expect(tokens.accepts(token, for: "alice", at: now.addingTimeInterval(CSRFTokens.lifetime - 60)))
        #expect(!tokens.accepts(token, for: "bob", at: now))
        #expect(!tokens.accepts(token, for: "alice ", at: now))
        #expect(!CSRFTokens().accepts(token, for: "alice", at: now), "another process's key")
    }

    @Test func aTokenExpires() {
        let token = tokens.issue(for: "alice", at: now.addingTimeInterval(-CSRFTokens.lifetime - 1))
        #expect(!tokens.accepts(token, for: "alice", at: now))
    }

    /// A clock step of a few seconds is tolerated; a token from far in the future was not issued here.
    @Test(arguments: [(60.0, true), (299.0, true), (301.0, false), (86_400.0, false), (1e12, false)])
    func aTokenFromTheFuture(ahead: Double, accepted: Bool) {
        let token = tokens.issue(for: "alice", at: now.addingTimeInterval(ahead))
        #expect(tokens.accepts(token, for: "alice", at: now) == accepted)
    }

    /// Any byte changed — in the time or in the tag — and the token is refused.
    @Test func aTamperedTokenIsRefused() throws {
        let bytes = try Base64URL.decode(tokens.issue(for: "alice", at: now))
        #expect(bytes.count == 24)
        for index in bytes.indices {
            var tampered = bytes
            tampered[index] ^= 0x01
            #expect(!tokens.accepts(Base64URL.encode(tampered), for: "alice", at: now), "byte \(index)")
        }
    }

    @Test(arguments: ["", "garbage", "!!!!", String(repeating: "A", count: 32), String(repeating: "A", count: 1000),
                      "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="])
    func garbageIsRefused(token: String) {
        #expect(!tokens.accepts(token, for: "alice", at: now))
    }
}
