@testable import AppStore
import Crypto
import Foundation
import Testing
import TestSupport

/// Apple's signing chains are public (every notification carries one), so a chain's verdict is kept only
/// once its leaf has verified a signature: replayed under junk signatures or varied headers, a genuine chain
/// must not push the chains of real notifications out of the cache.
@Suite struct ChainCacheAdmissionTests {
    @Test("a genuine chain under a bad signature is refused and not cached; under a good one it is")
    func onlyVerifiedChainsAreCached() throws {
        let pki = try PKIs.valid.get()
        let verifier = try Verifiers.production(cacheSize: 64, roots: [pki.root])
        let genuine = try pki.sign(Payloads.notification())
        for _ in 0..<3 {
            let error = #expect(throws: AppStoreVerificationError.self) {
                try verifier.verifyNotification(tamperingSignature(of: genuine), now: Fixture.now)
            }
            #expect(error?.code == .verificationFailure)
        }
        #expect(verifier.cachedChains == 0)
        _ = try verifier.verifyNotification(genuine, now: Fixture.now)
        #expect(verifier.cachedChains == 1)
    }
}
