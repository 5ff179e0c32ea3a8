import Crypto
import Foundation

/// Which app and environment a notification claims to be for, read WITHOUT verification. Its only use is
/// to choose the store connection whose settings then verify the notification: the verifier checks the
/// very same fields against the connection, so a forged claim can only select a connection it then fails.
public struct NotificationRouting: Sendable, Equatable {
    public let bundleID: String
    public let environment: AppStoreEnvironment?
    public let appAppleID: Int64?

    /// Reads `signedPayload` out of a webhook body (`{"signedPayload": "…"}`) — the body is bounded by ingest.
    public static func signedPayload(fromBody body: Data) throws -> String {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw AppStoreVerificationError(.invalidFormat, "the body is not a JSON object")
        }
        guard let payload = object["signedPayload"] as? String, !payload.isEmpty else {
            throw AppStoreVerificationError(.invalidFormat, "the body has no signedPayload string")
        }
        return payload
    }

    public init(unverified jws: String) throws {
        let parts: JWSParts
        do {
            parts = try JWSParts(jws)
        } catch let error as CryptoError {
            throw AppStoreVerificationError(.invalidFormat, error.reason)
        }
        guard let payload = try? JSONSerialization.jsonObject(with: parts.payload) as? [String: Any] else {
            throw AppStoreVerificationError(.invalidFormat, "the payload is not a JSON object")
        }
        let section = ["data", "summary", "appData", "externalPurchaseToken"].lazy
            .compactMap { payload[$0] as? [String: Any] }.first
        guard let section, let bundle = section["bundleId"] as? String, !bundle.isEmpty, bundle.utf8.count <= 255 else {
            throw AppStoreVerificationError(.invalidFormat, "the payload names no bundleId")
        }
        bundleID = bundle
        environment = (section["environment"] as? String).map(AppStoreEnvironment.init(rawValue:))
        appAppleID = (section["appAppleId"] as? NSNumber)?.int64Value
    }
}
