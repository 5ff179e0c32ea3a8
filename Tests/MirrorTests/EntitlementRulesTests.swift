import Foundation
import Mirror
import StoreModel
import Testing

/// The product spec's entitlement rules, case by case: store subscriptions follow the store (active until
/// its expiry, grace until its grace end, nothing else entitles, whatever SubscriptionFlow's status says);
/// web subscriptions follow SubscriptionFlow's status and `cancelled_at`.
@Suite struct EntitlementRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let ahead = now.addingTimeInterval(86_400)
    static let later = now.addingTimeInterval(2 * 86_400)
    static let past = now.addingTimeInterval(-86_400)

    struct Case: CustomTestStringConvertible, Sendable {
        let source: SubscriptionSource
        let status: SubscriptionStatus
        let state: StoreState?
        var expires: Date? = nil
        var graceEnds: Date? = nil
        var cancelled: Date? = nil
        /// `.some(nil)`: entitles with no end; `nil`: does not entitle.
        let grantUntil: Date??
        let why: String
        var testDescription: String { why }
    }

    static let cases: [Case] = [
        Case(source: .apple, status: .active, state: .active, expires: ahead, grantUntil: .some(ahead),
             why: "store active: until the store's expiry"),
        Case(source: .google, status: .cancelled, state: .active, expires: ahead, cancelled: ahead, grantUntil: .some(ahead),
             why: "store active with auto-renew off still entitles until expiry"),
        Case(source: .apple, status: .active, state: .active, expires: past, grantUntil: nil,
             why: "store active but past its expiry: the mirror has not heard of the end yet, the clock has"),
        Case(source: .apple, status: .active, state: .active, expires: now, grantUntil: nil,
             why: "the expiry instant itself no longer entitles"),
        Case(source: .google, status: .active, state: .active, expires: nil, grantUntil: .some(nil),
             why: "store active without an expiry: no end"),
        Case(source: .apple, status: .active, state: .grace, expires: past, graceEnds: ahead, grantUntil: .some(ahead),
             why: "grace: until the grace end, past the paid period"),
        Case(source: .google, status: .active, state: .grace, expires: later, grantUntil: .some(later),
             why: "grace without its own end: until the store's expiry"),
        Case(source: .apple, status: .active, state: .grace, expires: past, graceEnds: past, grantUntil: nil,
             why: "grace that has ended"),
        Case(source: .apple, status: .active, state: .onHold, expires: ahead, grantUntil: nil,
             why: "on hold (billing retry) never entitles, although SubscriptionFlow shows Active"),
        Case(source: .google, status: .active, state: .paused, expires: ahead, grantUntil: nil, why: "paused"),
        Case(source: .apple, status: .expired, state: .expired, expires: ahead, grantUntil: nil, why: "store expired"),
        Case(source: .apple, status: .expired, state: .revoked, expires: ahead, grantUntil: nil, why: "store revoked"),
        Case(source: .apple, status: .active, state: nil, expires: ahead, grantUntil: nil,
             why: "a store subscription without a store state is not trusted"),
        Case(source: .web, status: .active, state: nil, grantUntil: .some(nil), why: "web active: renews"),
        Case(source: .web, status: .trial, state: nil, expires: past, grantUntil: .some(nil),
             why: "web trial: entitles; its expires_at is not what the rule reads"),
        Case(source: .web, status: .active, state: nil, cancelled: ahead, grantUntil: .some(ahead),
             why: "web active with a cancellation ahead: until then"),
        Case(source: .web, status: .active, state: nil, cancelled: past, grantUntil: nil,
             why: "web active whose cancelled_at has passed"),
        Case(source: .web, status: .cancelled, state: nil, cancelled: ahead, grantUntil: .some(ahead),
             why: "web cancelled while cancelled_at is ahead"),
        Case(source: .web, status: .cancelled, state: nil, cancelled: past, grantUntil: nil,
             why: "web cancelled and past it"),
        Case(source: .web, status: .cancelled, state: nil, grantUntil: nil, why: "web cancelled without a date"),
        Case(source: .web, status: .expired, state: nil, grantUntil: nil, why: "web expired"),
    ]

    @Test(arguments: cases)
    func grant(_ c: Case) {
        let subject = EntitlementSubject(subscriptionID: 7, source: c.source, status: c.status, storeState: c.state,
                                         expiresAt: c.expires, graceEndsAt: c.graceEnds, cancelledAt: c.cancelled)
        let grant = EntitlementRules.grant(subject, at: Self.now)
        switch c.grantUntil {
        case nil:
            #expect(grant == nil)
        case .some(let until):
            #expect(grant == EntitlementGrant(source: c.source, subscriptionID: 7, expiresAt: until))
        }
    }

    @Test func theLongestGrantComesFirstNoEndBeforeAnyEndThenTheLatest() {
        let grants = [
            EntitlementGrant(source: .apple, subscriptionID: 4, expiresAt: Self.ahead),
            EntitlementGrant(source: .google, subscriptionID: 3, expiresAt: Self.later),
            EntitlementGrant(source: .web, subscriptionID: 9, expiresAt: nil),
            EntitlementGrant(source: .web, subscriptionID: 2, expiresAt: nil),
            EntitlementGrant(source: .apple, subscriptionID: 1, expiresAt: Self.ahead),
        ]
        #expect(EntitlementRules.longestFirst(grants).map(\.subscriptionID) == [2, 9, 3, 1, 4])
        #expect(EntitlementRules.longestFirst([]).isEmpty)
    }
}
