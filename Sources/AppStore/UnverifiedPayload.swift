import Crypto
import Foundation
import StrictJSON

/// A signed payload decoded WITHOUT verifying it, for people to read: the on-call console shows what a dead
/// letter's notification says beside what verification says of it now. Nothing may be decided from it; the
/// worker decides only from `SignedDataVerifier`'s answers.
public enum UnverifiedPayload {
    public static func notification(_ jws: String) throws -> NotificationPayload {
        try decoded(jws)
    }

    public static func transaction(_ jws: String) throws -> TransactionPayload {
        try decoded(jws)
    }

    private static func decoded<T: SignedPayload>(_ jws: String) throws -> T {
        do {
            return try JSONReader.read(try JWSParts(jws).payload, T.init(json:))
        } catch let error as CryptoError {
            throw AppStoreVerificationError(.invalidFormat, error.reason)
        } catch let error as JSONReaderError {
            throw AppStoreVerificationError(.invalidFormat, "payload is not a \(T.self) JSON object: \(error)")
        }
    }
}
