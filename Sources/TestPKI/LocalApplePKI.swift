import AppStore
import Crypto
import Foundation

/// A PKI generated on this machine in the shape of Apple's — P-384 root and intermediate, P-256 leaf, the
/// intermediate marked with `1.2.840.113635.100.6.2.1`, the leaf with `1.2.840.113635.100.6.11.1` — so the
/// local App Store simulator and the tests can sign payloads exactly as the App Store does. Its root is
/// trusted only where a store connection is explicitly configured with it.
public struct LocalApplePKI: Sendable {
    /// What to generate; the defaults give a chain that verifies. Tests switch parts off to prove each
    /// check of the verifier.
    public struct Options: Sendable {
        public var validity: ClosedRange<Date> = Date().addingTimeInterval(-86_400)...Date().addingTimeInterval(2 * 365 * 86_400)
        public var leafValidity: ClosedRange<Date>?
        public var intermediateIsCA = true
        public var intermediateMarker = true
        public var leafMarker = true
        public var leafKind: KeyKind = .ecP256

        public init() {}
    }

    public let root: Certificate
    public let intermediate: Certificate
    public let intermediateKey: PrivateKey
    public let leaf: Certificate
    public let leafKey: PrivateKey
    private let header: JWSSigningHeader

    private init(root: Certificate, intermediate: Certificate, intermediateKey: PrivateKey, leaf: Certificate,
                 leafKey: PrivateKey) {
        self.root = root
        self.intermediate = intermediate
        self.intermediateKey = intermediateKey
        self.leaf = leaf
        self.leafKey = leafKey
        header = JWSSigningHeader(algorithm: .es256, x5c: [leaf, intermediate, root])
    }

    public static func generate(_ options: Options = Options()) throws -> LocalApplePKI {
        let rootKey = try PrivateKey.generate(.ecP384)
        var rootBuilder = CertificateBuilder(commonName: "StoreSync Local Apple Root CA",
                                             notBefore: options.validity.lowerBound, notAfter: options.validity.upperBound)
        rootBuilder.isCertificateAuthority = true
        let root = try rootBuilder.selfSigned(key: rootKey)

        let intermediateKey = try PrivateKey.generate(.ecP384)
        var intermediateBuilder = CertificateBuilder(commonName: "StoreSync Local WWDR CA",
                                                     notBefore: options.validity.lowerBound,
                                                     notAfter: options.validity.upperBound)
        intermediateBuilder.isCertificateAuthority = options.intermediateIsCA
        if options.intermediateMarker { intermediateBuilder.markerExtensions = [SignedDataVerifier.intermediateMarkerOID] }
        let intermediate = try intermediateBuilder.issue(publicKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)

        let leafKey = try PrivateKey.generate(options.leafKind)
        let leafValidity = options.leafValidity ?? options.validity
        var leafBuilder = CertificateBuilder(commonName: "StoreSync Local Receipt Signing",
                                             notBefore: leafValidity.lowerBound, notAfter: leafValidity.upperBound)
        if options.leafMarker { leafBuilder.markerExtensions = [SignedDataVerifier.leafMarkerOID] }
        let leaf = try leafBuilder.issue(publicKey: leafKey.publicKey, issuer: intermediate, issuerKey: intermediateKey)
        return LocalApplePKI(root: root, intermediate: intermediate, intermediateKey: intermediateKey, leaf: leaf,
                             leafKey: leafKey)
    }

    /// Signs JSON `payload` as the App Store does: ES256 with `x5c` = leaf, intermediate, root.
    public func sign(_ payload: Data) throws -> String {
        try CompactJWS.sign(payload: payload, header: header, key: leafKey)
    }
}
