import Mirror
import Testing

/// The Account Tokens rules as a table: linking is forever, revoked tokens still link (the database reports
/// them as `.issued`), raw customer ids only when issued tokens are not required, anything else waits for a claim.
@Suite struct LinkingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let existing: String?
        let token: Linking.TokenMatch
        let requireIssuedTokens: Bool
        let expected: Linking.Decision

        var testDescription: String {
            "linked to \(existing ?? "nobody"), token \(token), require issued \(requireIssuedTokens) → \(expected)"
        }
    }

    static let cases: [Case] = [
        // Not linked yet.
        Case(existing: nil, token: .none, requireIssuedTokens: true, expected: .unlinked),
        Case(existing: nil, token: .none, requireIssuedTokens: false, expected: .unlinked),
        Case(existing: nil, token: .issued(customerID: "B"), requireIssuedTokens: true, expected: .link(customerID: "B")),
        Case(existing: nil, token: .issued(customerID: "B"), requireIssuedTokens: false, expected: .link(customerID: "B")),
        Case(existing: nil, token: .rawCustomerID(customerID: "B"), requireIssuedTokens: true, expected: .unlinked),
        Case(existing: nil, token: .rawCustomerID(customerID: "B"), requireIssuedTokens: false,
             expected: .link(customerID: "B")),
        Case(existing: nil, token: .unknown, requireIssuedTokens: true, expected: .unlinked),
        Case(existing: nil, token: .unknown, requireIssuedTokens: false, expected: .unlinked),
        // Linked to A: whatever the token says now, it stays with A.
        Case(existing: "A", token: .none, requireIssuedTokens: true, expected: .keep(customerID: "A")),
        Case(existing: "A", token: .none, requireIssuedTokens: false, expected: .keep(customerID: "A")),
        Case(existing: "A", token: .issued(customerID: "A"), requireIssuedTokens: true, expected: .keep(customerID: "A")),
        Case(existing: "A", token: .issued(customerID: "B"), requireIssuedTokens: true, expected: .keep(customerID: "A")),
        Case(existing: "A", token: .issued(customerID: "B"), requireIssuedTokens: false, expected: .keep(customerID: "A")),
        Case(existing: "A", token: .rawCustomerID(customerID: "B"), requireIssuedTokens: true,
             expected: .keep(customerID: "A")),
        Case(existing: "A", token: .rawCustomerID(customerID: "B"), requireIssuedTokens: false,
             expected: .keep(customerID: "A")),
        Case(existing: "A", token: .unknown, requireIssuedTokens: true, expected: .keep(customerID: "A")),
        Case(existing: "A", token: .unknown, requireIssuedTokens: false, expected: .keep(customerID: "A")),
    ]

    @Test(arguments: cases)
    func decides(_ rule: Case) {
        #expect(Linking.decide(existingCustomerID: rule.existing, token: rule.token,
                               requireIssuedTokens: rule.requireIssuedTokens) == rule.expected)
    }
}
