import AppStore
import Crypto
import Foundation
import TestPKI

/// The store connection and clock every App Store test uses; nothing depends on the wall clock.
enum Fixture {
    static let bundleID = "com.example.storesync"
    static let appAppleID: Int64 = 1_234_567_890
    /// The payloads' `signedDate`, well inside every PKI's validity.
    static let signedDate = utc(2025, 6, 1)
    /// The `now` passed to every verification: a year later, so a test passing only because the verifier used
    /// `now` instead of `signedDate` (or the reverse) would show.
    static let now = utc(2026, 6, 1)
}

/// A UTC date from calendar fields.
func utc(_ year: Int, _ month: Int = 1, _ day: Int = 1, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute,
                                              second: second))!
}

/// Milliseconds since 1970, as Apple encodes every date.
func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

/// One `LocalApplePKI` per variant, generated once per test process (P-384 key generation is slow-ish). All
/// have fixed validity (2020…2040) so no verdict depends on the day the tests run.
///
/// Results, not `try!`: a fixture crash would take every test down with it.
enum PKIs {
    static let validity = utc(2020)...utc(2040)
    /// The short-lived leaf's validity: all of 2025.
    static let shortLeafValidity = utc(2025)...utc(2026)

    static let valid = make()
    static let foreign = make()
    static let noLeafMarker = make { $0.leafMarker = false }
    static let noIntermediateMarker = make { $0.intermediateMarker = false }
    static let intermediateNotCA = make { $0.intermediateIsCA = false }
    static let p384Leaf = make { $0.leafKind = .ecP384 }
    static let shortLeaf = make { $0.leafValidity = shortLeafValidity }

    /// A root, a proper WWDR-marked intermediate, and a receipt-marked P-256 leaf issued by the root directly,
    /// not by that intermediate: `x5c` = [leaf, intermediate, root] then names an intermediate that is not on
    /// the leaf's path.
    struct Bypass: Sendable {
        let root: Certificate
        let intermediate: Certificate
        let leaf: Certificate
        let leafKey: PrivateKey

        func sign(_ payload: Data) throws -> String {
            try CompactJWS.sign(payload: payload, algorithm: .es256, key: leafKey, x5c: [leaf, intermediate, root])
        }
    }

    static let bypass: Result<Bypass, any Error> = Result {
        let rootKey = try PrivateKey.generate(.ecP384)
        var rootBuilder = CertificateBuilder(commonName: "Bypass Root", notBefore: validity.lowerBound,
                                             notAfter: validity.upperBound)
        rootBuilder.isCertificateAuthority = true
        let root = try rootBuilder.selfSigned(key: rootKey)
        var intermediateBuilder = CertificateBuilder(commonName: "Bypass WWDR", notBefore: validity.lowerBound,
                                                     notAfter: validity.upperBound)
        intermediateBuilder.isCertificateAuthority = true
        intermediateBuilder.markerExtensions = [SignedDataVerifier.intermediateMarkerOID]
        let intermediate = try intermediateBuilder.issue(publicKey: PrivateKey.generate(.ecP384).publicKey,
                                                         issuer: root, issuerKey: rootKey)
        let leafKey = try PrivateKey.generate(.ecP256)
        var leafBuilder = CertificateBuilder(commonName: "Bypass Leaf", notBefore: validity.lowerBound,
                                             notAfter: validity.upperBound)
        leafBuilder.markerExtensions = [SignedDataVerifier.leafMarkerOID]
        let leaf = try leafBuilder.issue(publicKey: leafKey.publicKey, issuer: root, issuerKey: rootKey)
        return Bypass(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }

    private static func make(_ configure: (inout LocalApplePKI.Options) -> Void = { _ in }) -> Result<LocalApplePKI, any Error> {
        var options = LocalApplePKI.Options()
        options.validity = validity
        configure(&options)
        return Result { try LocalApplePKI.generate(options) }
    }
}

/// Verifiers for one store connection, trusting the valid local PKI's root.
enum Verifiers {
    static func production(cacheSize: Int = 64, roots: [Certificate]? = nil) throws -> SignedDataVerifier {
        try SignedDataVerifier(roots: roots ?? [PKIs.valid.get().root], bundleID: Fixture.bundleID,
                               appAppleID: Fixture.appAppleID, environment: .production, chainCacheSize: cacheSize)
    }

    static func sandbox(cacheSize: Int = 64) throws -> SignedDataVerifier {
        try SignedDataVerifier(roots: [PKIs.valid.get().root], bundleID: Fixture.bundleID, appAppleID: nil,
                               environment: .sandbox, chainCacheSize: cacheSize)
    }
}

/// Payload JSON shaped like Apple's, dates in milliseconds since 1970. A nil argument leaves the field out.
enum Payloads {
    static func notification(type: String = "DID_RENEW", subtype: String? = "BILLING_RECOVERY",
                             bundleID: String? = Fixture.bundleID, appAppleID: Int64? = Fixture.appAppleID,
                             environment: String? = "Production", signedDate: Date? = Fixture.signedDate,
                             uuid: String = "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
                             signedTransactionInfo: String? = "eyJ.e30.sig") -> Data {
        var data: [String: Any] = ["bundleVersion": "1.0", "status": 1, "signedRenewalInfo": "eyJ.e30.sig"]
        data["signedTransactionInfo"] = signedTransactionInfo
        data["bundleId"] = bundleID
        data["appAppleId"] = appAppleID
        data["environment"] = environment
        var body: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "version": "2.0", "data": data]
        body["subtype"] = subtype
        body["signedDate"] = signedDate.map(milliseconds)
        return json(body)
    }

    static func transaction(bundleID: String? = Fixture.bundleID, environment: String? = "Production",
                            signedDate: Date? = Fixture.signedDate, price: Int64 = 5_000_000_000_990) -> Data {
        var body: [String: Any] = [
            "transactionId": "2000000123456789", "originalTransactionId": "2000000000000001",
            "webOrderLineItemId": "2000000000000002", "productId": "com.example.storesync.monthly",
            "subscriptionGroupIdentifier": "21000000", "purchaseDate": 1_748_736_000_123,
            "originalPurchaseDate": 1_700_000_000_000, "expiresDate": 1_751_328_000_456, "quantity": 1,
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "storefront": "USA",
            "storefrontId": "143441", "transactionReason": "RENEWAL", "price": price, "currency": "USD",
            "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138", "offerDiscountType": "PAY_AS_YOU_GO",
            "futureField": ["ignored": true],
        ]
        body["bundleId"] = bundleID
        body["environment"] = environment
        body["signedDate"] = signedDate.map(milliseconds)
        return json(body)
    }

    static func renewal(environment: String? = "Production", signedDate: Date? = Fixture.signedDate) -> Data {
        var body: [String: Any] = [
            "originalTransactionId": "2000000000000001", "productId": "com.example.storesync.monthly",
            "autoRenewProductId": "com.example.storesync.yearly", "autoRenewStatus": 1,
            "renewalDate": 1_751_328_000_456, "renewalPrice": 49_990, "currency": "EUR", "priceIncreaseStatus": 0,
            "recentSubscriptionStartDate": 1_700_000_000_000, "isInBillingRetryPeriod": false,
        ]
        body["environment"] = environment
        body["signedDate"] = signedDate.map(milliseconds)
        return json(body)
    }

    static func json(_ object: Any) -> Data {
        try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}

/// Hand-built tokens for the paths `LocalApplePKI.sign` cannot produce.
enum Tokens {
    /// `x5c` as Apple sends it: standard base64 DER, leaf first.
    static func x5c(_ pki: LocalApplePKI) -> [String] {
        [pki.leaf, pki.intermediate, pki.root].map { $0.der.base64EncodedString() }
    }

    /// A compact JWS with exactly this header, signed ES256 by `key` unless `signature` is given.
    static func craft(header: [String: Any], payload: Data, key: PrivateKey? = nil, signature: Data? = nil) throws -> String {
        try craft(rawHeader: Payloads.json(header), payload: payload, key: key, signature: signature)
    }

    /// A compact JWS whose header is exactly these JSON bytes.
    static func craft(rawHeader: Data, payload: Data, key: PrivateKey? = nil, signature: Data? = nil) throws -> String {
        let input = Base64URL.encode(rawHeader) + "." + Base64URL.encode(payload)
        let signature = try signature ?? SignatureAlgorithm.es256.sign(Data(input.utf8), with: key ?? PKIs.valid.get().leafKey)
        return input + "." + Base64URL.encode(signature)
    }

    static func parts(_ token: String) -> [String] { token.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }

    /// The token with one bit of its signature flipped.
    static func flippingSignature(_ token: String) throws -> String {
        let p = parts(token)
        var signature = try Base64URL.decode(p[2])
        signature[signature.startIndex + 10] ^= 0x01
        return "\(p[0]).\(p[1]).\(Base64URL.encode(signature))"
    }

    /// The token with its payload replaced and its original header and signature kept.
    static func replacingPayload(_ token: String, with payload: Data) -> String {
        let p = parts(token)
        return "\(p[0]).\(Base64URL.encode(payload)).\(p[2])"
    }

    /// The token's raw r‖s signature re-encoded as DER (`30 len 02 lenR R 02 lenS S`), what OpenSSL emits natively.
    static func withDERSignature(_ token: String) throws -> String {
        let p = parts(token)
        let raw = try Base64URL.decode(p[2])
        func integer(_ bytes: Data) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw.prefix(32)) + integer(raw.suffix(32))
        return "\(p[0]).\(p[1]).\(Base64URL.encode([0x30, UInt8(body.count)] + body))"
    }
}
