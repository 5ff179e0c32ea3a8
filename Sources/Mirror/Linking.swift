/// The Account Tokens rules of the product spec, as a pure function: which customer a purchase lineage
/// belongs to. Linking is forever — a lineage already linked never moves, a revoked token still identifies
/// its customer, and a purchase nobody can be sure of stays unlinked (pending claim) rather than attached to
/// a guessed customer.
public enum Linking {
    /// What the database knows about the purchase's account token.
    public enum TokenMatch: Sendable, Equatable {
        /// No token on the purchase.
        case none
        /// An issued account token of this account, active or revoked, and its customer.
        case issued(customerID: String)
        /// Not an issued token, but the id of one of this account's customers.
        case rawCustomerID(customerID: String)
        /// Neither.
        case unknown
    }

    public enum Decision: Sendable, Equatable {
        /// Stays with the customer it was linked to before.
        case keep(customerID: String)
        /// Links now, for good.
        case link(customerID: String)
        /// Stays unlinked, pending a claim.
        case unlinked
    }

    public static func decide(existingCustomerID: String?, token: TokenMatch, requireIssuedTokens: Bool) -> Decision {
        if let existingCustomerID { return .keep(customerID: existingCustomerID) }
        switch token {
        case .issued(let customerID): return .link(customerID: customerID)
        case .rawCustomerID(let customerID) where !requireIssuedTokens: return .link(customerID: customerID)
        case .rawCustomerID, .none, .unknown: return .unlinked
        }
    }
}
