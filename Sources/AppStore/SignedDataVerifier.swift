import Crypto
import Foundation
import StrictJSON

/// Verifies App Store signed data (`signedPayload`, `signedTransactionInfo`, `signedRenewalInfo`) the way
/// Apple's own libraries do with online checks off, for one store connection:
///
/// 1. compact JWS with `alg` ES256 and exactly three `x5c` certificates; the third is ignored — trust comes
///    only from the configured roots; a header with `crit` or `"b64": false` is refused;
/// 2. leaf → intermediate → root validated as of the payload's `signedDate` (now when it has none), the
///    intermediate a CA carrying `1.2.840.113635.100.6.2.1`, the leaf carrying `1.2.840.113635.100.6.11.1`;
/// 3. the ES256 signature checked with the leaf's P-256 key;
/// 4. `bundleId` (transactions, notifications), `appAppleId` (production notifications) and `environment`
///    compared with the connection.
public struct SignedDataVerifier: Sendable {
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"

    public let bundleID: String
    public let appAppleID: Int64?
    public let environment: AppStoreEnvironment
    private let trust: TrustStore
    private let cache: ChainCache

    /// - Parameters:
    ///   - roots: trusted roots; Apple Root CA - G3 unless a connection is configured otherwise (the simulator).
    ///   - chainCacheSize: validated (leaf, intermediate) pairs kept; 0 disables the cache.
    /// - Throws: in production without an App Apple ID, since its check would silently be skipped.
    public init(roots: [Certificate] = [AppleRoots.rootCAG3], bundleID: String, appAppleID: Int64?,
                environment: AppStoreEnvironment, chainCacheSize: Int = 64) throws {
        if environment == .production && appAppleID == nil {
            throw AppStoreVerificationError(.invalidAppIdentifier, "a Production connection needs its App Apple ID")
        }
        trust = try TrustStore(roots: roots)
        cache = ChainCache(capacity: chainCacheSize)
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
    }

    /// Signing chains whose verdict is cached (tests).
    var cachedChains: Int { cache.count }

    /// A notification's `signedPayload`, verified and decoded.
    public func verifyNotification(_ jws: String, now: Date = Date()) throws -> NotificationPayload {
        let payload: NotificationPayload = try verified(jws, now: now)
        let (bundle, appID, environment): (String?, Int64?, AppStoreEnvironment?)
        if let data = payload.data {
            (bundle, appID, environment) = (data.bundleId, data.appAppleId, data.environment)
        } else if let summary = payload.summary {
            (bundle, appID, environment) = (summary.bundleId, summary.appAppleId, summary.environment)
        } else if let token = payload.externalPurchaseToken {
            (bundle, appID, environment) = (token.bundleId, token.appAppleId, .ofExternalPurchase(id: token.externalPurchaseId))
        } else if let app = payload.appData {
            (bundle, appID, environment) = (app.bundleId, app.appAppleId, app.environment)
        } else {
            (bundle, appID, environment) = (nil, nil, nil)
        }
        try checkBundle(bundle)
        if self.environment == .production && appID != appAppleID {
            throw AppStoreVerificationError(.invalidAppIdentifier,
                                            "appAppleId \(appID.map(String.init) ?? "missing") is not \(appAppleID ?? 0)")
        }
        try checkEnvironment(environment)
        return payload
    }

    /// A `signedTransactionInfo`, verified and decoded.
    public func verifyTransaction(_ jws: String, now: Date = Date()) throws -> TransactionPayload {
        let payload: TransactionPayload = try verified(jws, now: now)
        try checkBundle(payload.bundleId)
        try checkEnvironment(payload.environment)
        return payload
    }

    /// The `signedTransactionInfo` of a verified notification, or nil when it names none. The notification's
    /// signature covers the nested token byte for byte, so checking the nested signature again would prove
    /// nothing more and cost as much as the first check; its format, header rules, bundle and environment are
    /// still checked.
    /// Taking the notification, not a string, keeps unverified tokens out: only `verifyNotification` makes one.
    public func enclosedTransaction(of notification: NotificationPayload) throws -> TransactionPayload? {
        guard let jws = notification.data?.signedTransactionInfo else { return nil }
        let token = try Self.parts(jws)
        do {
            try token.requireUnderstoodHeader()
        } catch let error as CryptoError {
            throw Self.headerFailure(error)
        }
        let payload: TransactionPayload = try Self.decoded(token)
        try checkBundle(payload.bundleId)
        try checkEnvironment(payload.environment)
        return payload
    }

    /// A `signedRenewalInfo`, verified and decoded (it carries no bundle id, so only the environment is checked).
    public func verifyRenewalInfo(_ jws: String, now: Date = Date()) throws -> RenewalInfoPayload {
        let payload: RenewalInfoPayload = try verified(jws, now: now)
        try checkEnvironment(payload.environment)
        return payload
    }

    private func checkBundle(_ bundle: String?) throws {
        guard bundle == bundleID else {
            throw AppStoreVerificationError(.invalidAppIdentifier, "bundleId \(bundle ?? "missing") is not \(bundleID)")
        }
    }

    private func checkEnvironment(_ environment: AppStoreEnvironment?) throws {
        guard environment == self.environment else {
            throw AppStoreVerificationError(.invalidEnvironment,
                                            "environment \(environment?.rawValue ?? "missing") is not \(self.environment)")
        }
    }

    /// App Store signing began in the 2010s; anything outside this span is not a real signedDate.
    static let plausibleDates = Date(timeIntervalSince1970: 946_684_800)...Date(timeIntervalSince1970: 7_258_118_400)

    private func verified<T: SignedPayload>(_ jws: String, now: Date) throws -> T {
        let token = try Self.parts(jws)
        let payload: T = try Self.decoded(token)
        let validationTime = payload.signedDate ?? now
        // The date comes from the unverified payload and picks the validation time: keep it to dates a real
        // payload can carry before it reaches any arithmetic.
        guard Self.plausibleDates.contains(validationTime) else {
            throw AppStoreVerificationError(.invalidFormat, "signedDate \(validationTime.timeIntervalSince1970) s is out of range")
        }
        let leafKey: PublicKey
        var validated: (key: PublicKey, validity: ClosedRange<Date>)?
        if let cached = cache.leafKey(header: token.encodedHeader, at: validationTime) {
            leafKey = cached
        } else {
            let fresh = try validateHeader(token, at: validationTime)
            (leafKey, validated) = (fresh.key, fresh)
        }
        do {
            try SignatureAlgorithm.es256.verify(token.signature, for: token.signingInput, with: leafKey)
        } catch let error as CryptoError {
            throw AppStoreVerificationError(.verificationFailure, error.reason)
        }
        // Kept only once a signature proved the chain's leaf signed this payload: a replayed public chain under
        // a junk signature (or a varied header) must not push genuine chains out of the cache.
        if let validated {
            cache.store(header: token.encodedHeader, leafKey: validated.key, validity: validated.validity, now: now)
        }
        return payload
    }

    private static func parts(_ jws: String) throws -> JWSParts {
        do {
            return try JWSParts(jws)
        } catch let error as CryptoError {
            throw AppStoreVerificationError(.invalidFormat, error.reason)
        }
    }

    /// A header demanding what StoreSync does not implement is refused as Apple's libraries refuse it
    /// (`VERIFICATION_FAILURE`); any other header fault is a format error.
    private static func headerFailure(_ error: CryptoError) -> AppStoreVerificationError {
        AppStoreVerificationError(error.code == .unsupportedHeader ? .verificationFailure : .invalidFormat, error.reason)
    }

    private static func decoded<T: SignedPayload>(_ token: JWSParts) throws -> T {
        do {
            return try JSONReader.read(token.payload, T.init(json:))
        } catch let error as JSONReaderError {
            throw AppStoreVerificationError(.invalidFormat, "payload is not a \(T.self) JSON object: \(error)")
        }
    }

    /// The header's checks: ES256, three certificates, and the path they form (see `validateChain`).
    private func validateHeader(_ token: JWSParts, at time: Date) throws -> (key: PublicKey, validity: ClosedRange<Date>) {
        let header: JWSHeader
        do {
            header = try token.decodeHeader()
        } catch let error as CryptoError {
            throw Self.headerFailure(error)
        }
        guard header.alg == "ES256" else {
            throw AppStoreVerificationError(.invalidFormat, "alg must be ES256, got \(header.alg ?? "none")")
        }
        guard let chain = header.x5c else { throw AppStoreVerificationError(.invalidFormat, "x5c header is missing") }
        guard chain.count == 3 else {
            throw AppStoreVerificationError(.invalidFormat, "x5c must hold 3 certificates, found \(chain.count)")
        }
        return try validateChain(leaf: chain[0], intermediate: chain[1], at: time)
    }

    private func validateChain(leaf leafBase64: String, intermediate intermediateBase64: String, at time: Date)
        throws -> (PublicKey, ClosedRange<Date>)
    {
        let leaf = try Self.certificate(leafBase64, "leaf")
        let intermediate = try Self.certificate(intermediateBase64, "intermediate")
        let path: ValidatedPath
        do {
            path = try trust.verify(leaf: leaf, intermediates: [intermediate], at: time)
        } catch let error as CryptoError {
            throw AppStoreVerificationError(error.code == .internalError ? .retryableFailure : .verificationFailure,
                                            "certificate chain: \(error.reason)")
        }
        // The checks below are about x5c[1]; they only mean something if x5c[1] is what issued the leaf.
        guard path.certificates.count == 3, path.certificates[1].der == intermediate.der else {
            throw AppStoreVerificationError(.verificationFailure,
                                            "the validated path is not leaf → x5c intermediate → root")
        }
        guard intermediate.isCertificateAuthority else {
            throw AppStoreVerificationError(.verificationFailure, "intermediate certificate is not a CA")
        }
        guard intermediate.hasExtension(oid: Self.intermediateMarkerOID) else {
            throw AppStoreVerificationError(.verificationFailure,
                                            "intermediate lacks Apple's WWDR extension \(Self.intermediateMarkerOID)")
        }
        guard leaf.hasExtension(oid: Self.leafMarkerOID) else {
            throw AppStoreVerificationError(.verificationFailure,
                                            "leaf lacks Apple's receipt-signing extension \(Self.leafMarkerOID)")
        }
        let key: PublicKey
        do {
            key = try leaf.publicKey()
        } catch let error as CryptoError {
            throw AppStoreVerificationError(.invalidCertificate, error.reason)
        }
        guard key.kind == .ecP256 else {
            throw AppStoreVerificationError(.verificationFailure, "leaf key is \(key.kind), not EC P-256")
        }
        return (key, path.validity)
    }

    private static func certificate(_ base64: String, _ role: String) throws -> Certificate {
        guard let der = Data(base64Encoded: base64) else {
            throw AppStoreVerificationError(.invalidCertificate, "\(role) certificate is not base64")
        }
        do {
            return try Certificate(der: der)
        } catch let error as CryptoError {
            throw AppStoreVerificationError(.invalidCertificate, "\(role) certificate: \(error.reason)")
        }
    }
}
