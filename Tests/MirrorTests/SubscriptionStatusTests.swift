import Mirror
import StoreModel
import Testing

/// SubscriptionFlow's status follows the store's state: expired once the store ends it, cancelled while
/// auto-renew is off and the period runs, trial in a free trial, active otherwise (billing retry included).
@Suite struct SubscriptionStatusTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let state: StoreState
        let autoRenew: Bool
        let inFreeTrial: Bool
        let expected: SubscriptionStatus

        var testDescription: String {
            "\(state.rawValue), auto-renew \(autoRenew), trial \(inFreeTrial) → \(expected.rawValue)"
        }
    }

    static let cases: [Case] = [
        Case(state: .active, autoRenew: true, inFreeTrial: false, expected: .active),
        Case(state: .active, autoRenew: true, inFreeTrial: true, expected: .trial),
        Case(state: .active, autoRenew: false, inFreeTrial: false, expected: .cancelled),
        Case(state: .active, autoRenew: false, inFreeTrial: true, expected: .cancelled),
        Case(state: .grace, autoRenew: true, inFreeTrial: false, expected: .active),
        Case(state: .grace, autoRenew: true, inFreeTrial: true, expected: .trial),
        Case(state: .grace, autoRenew: false, inFreeTrial: false, expected: .cancelled),
        Case(state: .grace, autoRenew: false, inFreeTrial: true, expected: .cancelled),
        Case(state: .paused, autoRenew: true, inFreeTrial: false, expected: .active),
        Case(state: .paused, autoRenew: true, inFreeTrial: true, expected: .trial),
        Case(state: .paused, autoRenew: false, inFreeTrial: false, expected: .cancelled),
        Case(state: .paused, autoRenew: false, inFreeTrial: true, expected: .cancelled),
        Case(state: .onHold, autoRenew: true, inFreeTrial: false, expected: .active),
        Case(state: .onHold, autoRenew: true, inFreeTrial: true, expected: .active),
        Case(state: .onHold, autoRenew: false, inFreeTrial: false, expected: .active),
        Case(state: .onHold, autoRenew: false, inFreeTrial: true, expected: .active),
        Case(state: .expired, autoRenew: true, inFreeTrial: false, expected: .expired),
        Case(state: .expired, autoRenew: true, inFreeTrial: true, expected: .expired),
        Case(state: .expired, autoRenew: false, inFreeTrial: false, expected: .expired),
        Case(state: .expired, autoRenew: false, inFreeTrial: true, expected: .expired),
        Case(state: .revoked, autoRenew: true, inFreeTrial: false, expected: .expired),
        Case(state: .revoked, autoRenew: true, inFreeTrial: true, expected: .expired),
        Case(state: .revoked, autoRenew: false, inFreeTrial: false, expected: .expired),
        Case(state: .revoked, autoRenew: false, inFreeTrial: true, expected: .expired),
    ]

    @Test(arguments: cases)
    func follows(_ rule: Case) {
        #expect(SubscriptionStatus.following(state: rule.state, autoRenew: rule.autoRenew, inFreeTrial: rule.inFreeTrial)
                == rule.expected)
    }

    @Test func everyStoreStateIsCovered() {
        #expect(Set(Self.cases.map(\.state)) == Set(StoreState.allCases))
    }
}
