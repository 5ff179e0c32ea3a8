import Crypto
import Foundation
import StrictJSON

/// Which app and environment a notification claims to be for, read WITHOUT verification. Its main use is
/// to choose the store connection whose settings then verify the notification: the verifier checks the
/// very same fields against the connection, so a forged claim can only select a connection it then fails.
public struct NotificationRouting: Sendable, Equatable {
    public let bundleID: String
    public let environment: AppStoreEnvironment?
    public let appAppleID: Int64?
    /// The claimed `notificationUUID` and the `originalTransactionId` of the claimed `signedTransactionInfo`
    /// (nil when unreadable): keys to read the dedup receipt and the lineage's state in the same round trip as
    /// the connection. What is read with them may only be used once the verified payload names the same.
    public let notificationUUID: String?
    public var lineage: String? { signedTransactionInfo.flatMap(Self.originalTransactionID(of:)) }
    /// Decoded only when `lineage` is asked for: ingest, which routes every webhook, never needs it.
    private let signedTransactionInfo: String?

    /// Reads `signedPayload` out of a webhook body (`{"signedPayload": "…"}`) — the body is bounded by ingest,
    /// which checks bodies with this same reading, so what it accepts the worker can read.
    public static func signedPayload(fromBody body: Data) throws -> String {
        let payload: String?
        do {
            payload = try string("signedPayload", of: body)
        } catch {
            throw AppStoreVerificationError(.invalidFormat, "body is not a JSON object (\(error))")
        }
        guard let payload, !payload.isEmpty else {
            throw AppStoreVerificationError(.invalidFormat, "body has no signedPayload string")
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
        var sections: [String: Section] = [:]
        var uuid: String?
        do {
            try JSONReader.read(parts.payload) { reader in
                try reader.readObject { reader, key in
                    switch key {
                    case "data", "summary", "appData", "externalPurchaseToken":
                        sections[key.description] = try reader.readOptional(Section.init(json:))
                    case "notificationUUID": uuid = try reader.readStringIfPresent()
                    default: try reader.skipValue()
                    }
                }
            }
        } catch {
            throw AppStoreVerificationError(.invalidFormat, "the payload is not a JSON object: \(error)")
        }
        let name = Self.sectionPrecedence.first { sections[$0] != nil }
        guard let name, let section = sections[name], let bundle = section.bundleId, !bundle.isEmpty,
              bundle.utf8.count <= 255 else {
            throw AppStoreVerificationError(.invalidFormat, "the payload names no bundleId")
        }
        // It is quoted in reasons and logs and looked up in the database: no control characters (a `\u0000`).
        guard !bundle.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AppStoreVerificationError(.invalidFormat, "the payload's bundleId holds a control character")
        }
        bundleID = bundle
        // An external purchase token names no environment; its id says it, as the verifier reads it.
        environment = name == "externalPurchaseToken" ? .ofExternalPurchase(id: section.externalPurchaseId)
            : section.environment
        appAppleID = section.appAppleId
        notificationUUID = uuid
        signedTransactionInfo = sections["data"]?.signedTransactionInfo
    }

    /// Where the claims come from when a payload (against Apple's word) holds more than one section: the order
    /// `SignedDataVerifier.verifyNotification` and Apple's libraries check them in, so that routing picks the
    /// connection by the same `bundleId` the verifier then checks.
    static let sectionPrecedence = ["data", "summary", "externalPurchaseToken", "appData"]

    private static func originalTransactionID(of jws: String) -> String? {
        guard let parts = try? JWSParts(jws) else { return nil }
        return try? string("originalTransactionId", of: parts.payload)
    }

    /// The string member `name` of the JSON object `json` (nil when absent or null).
    private static func string(_ name: StaticString, of json: Data) throws -> String? {
        try JSONReader.read(json) { reader in
            var value: String?
            try reader.readObject { reader, key in
                if name ~= key { value = try reader.readStringIfPresent() } else { try reader.skipValue() }
            }
            return value
        }
    }

    /// The fields routing reads from whichever section the payload has.
    private struct Section {
        var bundleId: String?
        var environment: AppStoreEnvironment?
        var appAppleId: Int64?
        var signedTransactionInfo: String?
        var externalPurchaseId: String?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "bundleId": bundleId = try reader.readString()
                case "externalPurchaseId": externalPurchaseId = try reader.readString()
                case "environment": environment = try reader.readEnvironment()
                case "appAppleId": appAppleId = try reader.readInt64()
                case "signedTransactionInfo": signedTransactionInfo = try reader.readStringIfPresent()
                default: try reader.skipValue()
                }
            }
        }
    }
}
