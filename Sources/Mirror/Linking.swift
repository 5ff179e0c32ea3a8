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
        /// A claimant asked for a purchase that is, or is tagged to be, another customer's: nothing changes.
        case refused(ownerCustomerID: String)
    }

    /// - Parameter claimant: the customer a backend registers the purchase for (`POST /mobile-stores/purchases`),
    ///   or nil for a store's own word (notifications, resyncs). A claimant takes an unlinked purchase, also one
    ///   tagged with a token nobody issued; it is refused a purchase linked to someone else or tagged with
    ///   another customer's token (active or revoked) — or raw customer id, where those link.
    public static func decide(existingCustomerID: String?, token: TokenMatch, requireIssuedTokens: Bool,
                              claimant: String? = nil) -> Decision {
        if let claimant {
            let owner = existingCustomerID ?? decide(existingCustomerID: nil, token: token,
                                                     requireIssuedTokens: requireIssuedTokens).linkedCustomerID
            guard let owner else { return .link(customerID: claimant) }
            guard owner == claimant else { return .refused(ownerCustomerID: owner) }
            return existingCustomerID == nil ? .link(customerID: claimant) : .keep(customerID: claimant)
        }
        if let existingCustomerID { return .keep(customerID: existingCustomerID) }
        switch token {
        case .issued(let customerID): return .link(customerID: customerID)
        case .rawCustomerID(let customerID) where !requireIssuedTokens: return .link(customerID: customerID)
        case .rawCustomerID, .none, .unknown: return .unlinked
        }
    }
}

extension Linking.Decision {
    /// The customer the purchase belongs to after the decision, if any.
    var linkedCustomerID: String? {
        switch self {
        case .keep(let id), .link(let id): id
        case .unlinked, .refused: nil
        }
    }
}
