import Crypto
import Foundation

/// A signed payload that passed `SignedDataVerifier`: the decoded value and the JSON exactly as Apple
/// signed it. Only the verifier makes one, so a value of this type is proof that its checks ran.
public struct Verified<Payload: Sendable>: Sendable {
    public let payload: Payload
    /// The signed JSON byte for byte, fields this version does not model included: what on-call reads.
    public let json: Data

    init(_ payload: Payload, signedBy jws: String) throws {
        self.payload = payload
        json = try JWSParts(jws).payload
    }
}

extension SignedDataVerifier {
    /// `verifyTransaction`, keeping the signed JSON alongside the decoded payload.
    public func verifiedTransaction(_ jws: String, now: Date = Date()) throws -> Verified<TransactionPayload> {
        try Verified(verifyTransaction(jws, now: now), signedBy: jws)
    }

    /// `verifyRenewalInfo`, keeping the signed JSON alongside the decoded payload.
    public func verifiedRenewalInfo(_ jws: String, now: Date = Date()) throws -> Verified<RenewalInfoPayload> {
        try Verified(verifyRenewalInfo(jws, now: now), signedBy: jws)
    }
}
