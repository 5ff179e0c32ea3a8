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

    /// A backend registering the purchase for customer C: C takes what nobody holds (an unknown token too),
    /// keeps what is C's, and is refused what is, or is tagged to be, someone else's.
    static let claims: [Case] = [
        Case(existing: nil, token: .none, requireIssuedTokens: true, expected: .link(customerID: "C")),
        Case(existing: nil, token: .unknown, requireIssuedTokens: true, expected: .link(customerID: "C")),
        Case(existing: nil, token: .issued(customerID: "C"), requireIssuedTokens: true, expected: .link(customerID: "C")),
        Case(existing: nil, token: .issued(customerID: "B"), requireIssuedTokens: true,
             expected: .refused(ownerCustomerID: "B")),
        Case(existing: nil, token: .rawCustomerID(customerID: "B"), requireIssuedTokens: false,
             expected: .refused(ownerCustomerID: "B")),
        // A raw id does not link where issued tokens are required: the purchase is nobody's yet.
        Case(existing: nil, token: .rawCustomerID(customerID: "B"), requireIssuedTokens: true,
             expected: .link(customerID: "C")),
        Case(existing: "C", token: .none, requireIssuedTokens: true, expected: .keep(customerID: "C")),
        Case(existing: "C", token: .issued(customerID: "B"), requireIssuedTokens: true, expected: .keep(customerID: "C")),
        Case(existing: "A", token: .none, requireIssuedTokens: true, expected: .refused(ownerCustomerID: "A")),
        Case(existing: "A", token: .issued(customerID: "C"), requireIssuedTokens: false,
             expected: .refused(ownerCustomerID: "A")),
    ]

    @Test(arguments: claims)
    func decidesAClaim(_ rule: Case) {
        #expect(Linking.decide(existingCustomerID: rule.existing, token: rule.token,
                               requireIssuedTokens: rule.requireIssuedTokens, claimant: "C") == rule.expected)
    }
}
