import AppStore
import StoreModel
@testable import Sync
import Testing

/// Each of N worker processes takes 1/N of Apple's published limits: rounded down, so that together they
/// never exceed them, yet at least one request per second so that no process starves.
@Suite struct AppleRateLimitShareTests {
    @Test(arguments: [
        (StoreEnvironment.production, 1.0, 50),
        (.production, 1.0 / 3, 16),
        (.production, 0.5, 25),
        (.sandbox, 0.5, 2),
        (.sandbox, 1.0 / 3, 1),
        (.sandbox, 0.01, 1),
    ] as [(StoreEnvironment, Double, Int)])
    func aShareIsRoundedDownToAtLeastOne(environment: StoreEnvironment, share: Double, statusesPerSecond: Int) {
        let published = AppStoreRateLimits.apple(environment)
        let scaled = published.scaled(by: share)
        #expect(scaled.subscriptionStatuses.perSecond == statusesPerSecond)
        for family in AppStoreEndpointFamily.allCases {
            #expect(Double(scaled[family].perSecond) <= max(1, Double(published[family].perSecond) * share))
            #expect(Double(scaled[family].burst) <= max(1, Double(published[family].burst) * share))
        }
    }
}
