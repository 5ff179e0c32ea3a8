import Crypto
import Foundation
@testable import Simulator
import TestSupport
import Testing

/// The simulator remembers tokens it accepted, so a client reusing its token is not re-verified on every
/// request; the memory must never outlive the token or let another token through.
@Suite struct APITokenCacheTests {
    @Test func anAcceptedTokenIsAcceptedAgainUntilItExpiresAndThenRefused() throws {
        let authenticator = APIAuthenticator(apps: [Fixture.bundleID: try Fixture.app()])
        let token = try APIAuthenticationTests.token(lifetime: 300)
        let now = Date()
        for _ in 0..<2 {
            guard case .success(let app) = authenticator.authenticate("Bearer \(token)", now: now) else {
                Issue.record("a valid token was refused")
                return
            }
            #expect(app.bundleID == Fixture.bundleID)
        }
        guard case .failure(let failure) = authenticator.authenticate("Bearer \(token)", now: now.addingTimeInterval(301))
        else {
            Issue.record("an expired token was accepted from memory")
            return
        }
        #expect(failure.description.contains("expired"))
    }

    @Test func aRememberedTokenDoesNotVouchForATokenDifferingInItsSignature() throws {
        let authenticator = APIAuthenticator(apps: [Fixture.bundleID: try Fixture.app()])
        let token = try APIAuthenticationTests.token()
        guard case .success = authenticator.authenticate("Bearer \(token)", now: Date()) else {
            Issue.record("a valid token was refused")
            return
        }
        let tampered = tamperingSignature(of: token)
        guard case .failure(let failure) = authenticator.authenticate("Bearer \(tampered)", now: Date()) else {
            Issue.record("a tampered token was accepted")
            return
        }
        #expect(failure.description.contains("signature"))
    }
}
