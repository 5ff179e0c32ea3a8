import Crypto
import Foundation
import TestPKI
import Testing

/// A root → intermediate → leaf chain with fixed validity, issued by `CertificateBuilder` once per process.
enum TestPKI {
    static let wwdrOID = "1.2.840.113635.100.6.2.1"
    static let receiptOID = "1.2.840.113635.100.6.11.1"

    struct Chain: Sendable {
        let root: Certificate
        let rootKey: PrivateKey
        let intermediate: Certificate
        let intermediateKey: PrivateKey
        /// Valid 2025…2030, inside the intermediate's 2021…2035.
        let leaf: Certificate
        let leafKey: PrivateKey
        /// Valid 2024…2038, outliving the intermediate: its path is valid only 2024…2035.
        let longLeaf: Certificate
    }

    /// Results rather than `try!`: a builder failure then fails the tests that need the chain instead of
    /// crashing the whole test process.
    static let main = Result { try chain(name: "Main") }
    static let foreign = Result { try chain(name: "Foreign") }

    static func chain(name: String) throws -> Chain {
        let rootKey = try PrivateKey.generate(.ecP384)
        var rootBuilder = CertificateBuilder(commonName: "\(name) Root", notBefore: utc(2020), notAfter: utc(2040))
        rootBuilder.isCertificateAuthority = true
        let root = try rootBuilder.selfSigned(key: rootKey)

        let intermediateKey = try PrivateKey.generate(.ecP384)
        var intermediateBuilder = CertificateBuilder(commonName: "\(name) Intermediate", notBefore: utc(2021),
                                                     notAfter: utc(2035))
        intermediateBuilder.isCertificateAuthority = true
        intermediateBuilder.markerExtensions = [wwdrOID]
        let intermediate = try intermediateBuilder.issue(publicKey: intermediateKey.publicKey, issuer: root,
                                                         issuerKey: rootKey)

        let leafKey = try PrivateKey.generate(.ecP256)
        var leafBuilder = CertificateBuilder(commonName: "\(name) Leaf", notBefore: utc(2025), notAfter: utc(2030))
        leafBuilder.markerExtensions = [receiptOID]
        let leaf = try leafBuilder.issue(publicKey: leafKey.publicKey, issuer: intermediate, issuerKey: intermediateKey)

        let longLeaf = try CertificateBuilder(commonName: "\(name) Long Leaf", notBefore: utc(2024), notAfter: utc(2038))
            .issue(publicKey: leafKey.publicKey, issuer: intermediate, issuerKey: intermediateKey)
        for certificate in [root, intermediate, leaf, longLeaf] where !certificate.subject.hasSuffix("/O=StoreSync Test PKI") {
            throw CryptoError(.internalError, "builder wrote subject \(certificate.subject)")
        }
        return Chain(root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
                     leaf: leaf, leafKey: leafKey, longLeaf: longLeaf)
    }
}

/// Guards `Certificate` parsing and inspection and `TrustStore.verify`: path validation at a chosen time that
/// trusts only the store's roots, and the validity span it reports for caching.
@Suite("Certificates and trust")
struct CertificateTests {
    let pki: TestPKI.Chain
    let foreign: TestPKI.Chain
    let trust: TrustStore

    init() throws {
        pki = try TestPKI.main.get()
        foreign = try TestPKI.foreign.get()
        trust = try TrustStore(roots: [pki.root])
    }

    @Test("the chain verifies inside its validity and reports the path and the leaf's span")
    func verifies() throws {
        let path = try trust.verify(leaf: pki.leaf, intermediates: [pki.intermediate], at: utc(2026, 6, 1))
        #expect(path.validity == utc(2025)...utc(2030).addingTimeInterval(-1))
        #expect(path.certificates.map(\.der) == [pki.leaf.der, pki.intermediate.der, pki.root.der])
    }

    @Test("the reported span is the intersection of every certificate's validity, root included")
    func spanIsIntersection() throws {
        let path = try trust.verify(leaf: pki.longLeaf, intermediates: [pki.intermediate], at: utc(2026, 6, 1))
        // The leaf's notBefore, one second before the intermediate's notAfter (OpenSSL: expired at notAfter).
        #expect(path.validity == utc(2024)...utc(2035).addingTimeInterval(-1))
    }

    /// `verify` documents that the same chain validates at any moment of the reported span, and the App Store
    /// chain cache relies on it (`ChainCache` answers a lookup at any date the span `contains`).
    @Test("the chain validates at every moment of the reported span, both ends included")
    func spanContract() throws {
        for leaf in [pki.leaf, pki.longLeaf] {
            let span = try trust.verify(leaf: leaf, intermediates: [pki.intermediate], at: utc(2026, 6, 1)).validity
            for date in [span.lowerBound, span.lowerBound.addingTimeInterval(1), span.upperBound.addingTimeInterval(-1),
                         span.upperBound] {
                #expect(throws: Never.self, "\(leaf.subject) at \(date), span \(span)") {
                    try trust.verify(leaf: leaf, intermediates: [pki.intermediate], at: date)
                }
            }
        }
    }

    @Test("validity is checked to the second", arguments: [
        (utc(2025), true), (utc(2030).addingTimeInterval(-1), true),
        (utc(2025).addingTimeInterval(-1), false), (utc(2030).addingTimeInterval(1), false),
    ] as [(Date, Bool)])
    func boundaries(date: Date, valid: Bool) throws {
        if valid {
            try trust.verify(leaf: pki.leaf, intermediates: [pki.intermediate], at: date)
        } else {
            let error = #expect(throws: CryptoError.self) {
                try trust.verify(leaf: pki.leaf, intermediates: [pki.intermediate], at: date)
            }
            #expect(error?.code == .untrustedChain)
        }
    }

    @Test("path validation fails with untrustedChain, naming the certificate and OpenSSL's reason", arguments: [
        ("foreign root", ChainCase.foreignRoot, "issuer"),
        ("before the leaf's notBefore", .beforeLeaf, "leaf: certificate is not yet valid"),
        ("after the leaf's notAfter", .afterLeaf, "leaf: certificate has expired"),
        ("after the intermediate's notAfter", .afterIntermediate, "intermediate: certificate has expired"),
        ("intermediate missing", .missingIntermediate, "issuer"),
        ("root passed as an untrusted intermediate", .rootAsIntermediate, "self-signed certificate in certificate chain"),
        ("leaf signed by the wrong key", .forgedLeaf, "signature"),
    ] as [(String, ChainCase, String)])
    func failures(name: String, chainCase: ChainCase, fragment: String) throws {
        let (pki, foreign) = (pki, foreign)
        let (store, leaf, intermediates, date): (TrustStore, Certificate, [Certificate], Date) = switch chainCase {
        case .foreignRoot: (try TrustStore(roots: [foreign.root]), pki.leaf, [pki.intermediate], utc(2026))
        case .beforeLeaf: (trust, pki.leaf, [pki.intermediate], utc(2024, 6, 1))
        case .afterLeaf: (trust, pki.leaf, [pki.intermediate], utc(2030, 6, 1))
        case .afterIntermediate: (trust, pki.longLeaf, [pki.intermediate], utc(2036))
        case .missingIntermediate: (trust, pki.leaf, [], utc(2026))
        case .rootAsIntermediate:
            (try TrustStore(roots: [foreign.root]), pki.leaf, [pki.intermediate, pki.root], utc(2026))
        case .forgedLeaf:
            (trust, try CertificateBuilder(commonName: "Forged", notBefore: utc(2025), notAfter: utc(2030))
                .issue(publicKey: pki.leafKey.publicKey, issuer: pki.intermediate, issuerKey: foreign.intermediateKey),
             [pki.intermediate], utc(2026))
        }
        let error = #expect(throws: CryptoError.self, "\(name)") {
            try store.verify(leaf: leaf, intermediates: intermediates, at: date)
        }
        #expect(error?.code == .untrustedChain, "\(name)")
        #expect(error?.reason.contains(fragment) == true, "\(name): \(error?.reason ?? "")")
    }

    enum ChainCase: Sendable {
        case foreignRoot, beforeLeaf, afterLeaf, afterIntermediate, missingIntermediate, rootAsIntermediate, forgedLeaf
    }

    @Test("a trust store with several roots accepts chains to any of them")
    func severalRoots() throws {
        let store = try TrustStore(roots: [foreign.root, pki.root])
        #expect(store.roots.count == 2)
        try store.verify(leaf: pki.leaf, intermediates: [pki.intermediate], at: utc(2026))
        try store.verify(leaf: foreign.leaf, intermediates: [foreign.intermediate], at: utc(2026))
    }

    @Test("a trust store needs a root")
    func emptyTrustStore() {
        let error = #expect(throws: CryptoError.self) { try TrustStore(roots: []) }
        #expect(error?.code == .invalidCertificate)
    }

    @Test("DER and PEM round-trip byte for byte")
    func derPEMRoundTrip() throws {
        for certificate in [pki.root, pki.intermediate, pki.leaf] {
            let der = certificate.der
            #expect(der.first == 0x30)
            #expect(try Certificate(der: der).der == der)
            #expect(certificate.pem.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
            #expect(try Certificate(pem: certificate.pem).der == der)
            #expect(try Certificate(pem: pem(der, label: "CERTIFICATE")).der == der)
        }
    }

    @Test("load reads every certificate of a PEM bundle, in order, and a single DER file")
    func load() throws {
        let bundle = "subject=/CN=Main Leaf\n" + pki.leaf.pem + "\n" + pki.intermediate.pem
        let fromPEM = try Certificate.load(Data(bundle.utf8))
        #expect(fromPEM.map(\.der) == [pki.leaf.der, pki.intermediate.der])

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-\(UUID()).cer")
        defer { try? FileManager.default.removeItem(at: file) }
        try pki.root.der.write(to: file)
        let fromDER = try Certificate.load(try Data(contentsOf: file))
        #expect(fromDER.map(\.der) == [pki.root.der])
    }

    @Test("load refuses input holding no certificate", arguments: [
        Data(), Data("hello".utf8), Data("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n".utf8),
        Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8), Data([0x30, 0x03, 0x02, 0x01, 0x00]),
    ])
    func loadRejects(data: Data) {
        let error = #expect(throws: CryptoError.self) { try Certificate.load(data) }
        #expect(error?.code == .invalidCertificate)
    }

    @Test("DER with trailing bytes, truncated, empty or oversized is refused", arguments: [
        ("trailing byte", TrailingCase.trailing), ("truncated", .truncated), ("empty", .empty), ("over 16 KiB", .huge),
    ] as [(String, TrailingCase)])
    func derRejects(name: String, derCase: TrailingCase) {
        let der = pki.leaf.der
        let input: Data = switch derCase {
        case .trailing: der + Data([0x00])
        case .truncated: der.dropLast(1)
        case .empty: Data()
        case .huge: Data([0x30]) + Data(repeating: 0, count: 16 * 1024)
        }
        let error = #expect(throws: CryptoError.self, "\(name)") { try Certificate(der: input) }
        #expect(error?.code == .invalidCertificate, "\(name)")
        if derCase == .trailing {
            #expect(error?.reason.contains("trailing") == true, "\(error?.reason ?? "")")
            #expect(throws: CryptoError.self) { try Certificate.load(input) }
        }
    }

    enum TrailingCase: Sendable { case trailing, truncated, empty, huge }

    @Test("marker extensions are present exactly where the builder put them")
    func markerExtensions() {
        #expect(pki.intermediate.hasExtension(oid: TestPKI.wwdrOID))
        #expect(!pki.intermediate.hasExtension(oid: TestPKI.receiptOID))
        #expect(pki.leaf.hasExtension(oid: TestPKI.receiptOID))
        #expect(!pki.leaf.hasExtension(oid: TestPKI.wwdrOID))
        #expect(!pki.longLeaf.hasExtension(oid: TestPKI.receiptOID))
        #expect(!pki.root.hasExtension(oid: TestPKI.wwdrOID))
        #expect(pki.leaf.hasExtension(oid: "2.5.29.19"))  // basic constraints, which every issued certificate has
        #expect(!pki.leaf.hasExtension(oid: "not an oid"))
        #expect(!pki.leaf.hasExtension(oid: ""))
    }

    @Test("basic constraints: root and intermediate are CAs, leaves are not")
    func certificateAuthority() {
        #expect(pki.root.isCertificateAuthority)
        #expect(pki.intermediate.isCertificateAuthority)
        #expect(!pki.leaf.isCertificateAuthority)
        #expect(!pki.longLeaf.isCertificateAuthority)
    }

    @Test("the fingerprint is SHA-256 of the DER encoding")
    func fingerprint() {
        for certificate in [pki.root, pki.intermediate, pki.leaf] {
            #expect(certificate.fingerprint == Digest.sha256(certificate.der))
            #expect(certificate.fingerprint.count == 32)
        }
        #expect(pki.leaf.fingerprint != pki.longLeaf.fingerprint)
    }

    @Test("validity dates, subject and public key come back as issued")
    func inspection() throws {
        #expect(pki.leaf.notBefore == utc(2025))
        #expect(pki.leaf.notAfter == utc(2030))
        #expect(pki.intermediate.notAfter == utc(2035))
        #expect(pki.root.notBefore == utc(2020))
        #expect(pki.leaf.subject == "/CN=Main Leaf/O=StoreSync Test PKI")
        #expect(pki.root.subject == "/CN=Main Root/O=StoreSync Test PKI")
        #expect(try pki.leaf.publicKey().kind == .ecP256)
        #expect(try pki.root.publicKey().kind == .ecP384)
        #expect(try pki.leaf.publicKey().pem() == pki.leafKey.publicKey.pem())
    }

    /// `CertificateBuilder` must always produce exactly the subject it was asked for. Issued from several tasks
    /// at once (as parallel tests and the simulator do), recycled heap memory sits right after the builder's
    /// name buffers, so a builder that hands OpenSSL a non-NUL-terminated Swift array with length -1 (strlen)
    /// shows it here: garbage appended to `O=` or "invalid utf8string".
    @Test("issuing certificates concurrently always succeeds with exactly the requested subject")
    func issuingIsReliable() async throws {
        let key = pki.intermediateKey
        let failures = await withTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var failures: [String] = []
                    for index in 0..<100 {
                        var builder = CertificateBuilder(commonName: "Root \(task)-\(index)", notBefore: utc(2020),
                                                         notAfter: utc(2040))
                        builder.isCertificateAuthority = index % 2 == 0
                        builder.markerExtensions = index % 3 == 0 ? [TestPKI.wwdrOID] : []
                        do {
                            let subject = try builder.selfSigned(key: key).subject
                            if subject != "/CN=Root \(task)-\(index)/O=StoreSync Test PKI" { failures.append(subject) }
                        } catch {
                            failures.append("\(error)")
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.isEmpty, "\(failures.count) of 800 failed, e.g. \(failures.prefix(3))")
    }
}
