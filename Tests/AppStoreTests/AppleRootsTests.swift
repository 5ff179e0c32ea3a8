import AppStore
import Crypto
import Foundation
import Testing

/// Guards the embedded Apple Root CA - G3, the only certificate production trust rests on: it must be the
/// exact certificate Apple publishes (pinned by SHA-256 fingerprint) and look like it (a P-384 CA valid to 2039).
@Suite("Apple roots")
struct AppleRootsTests {
    /// The reference copy shipped with the project documentation, outside the package.
    static let referenceFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/data/AppleRootCA-G3.cer").standardized

    @Test("the embedded root's SHA-256 fingerprint is the pinned one, and Apple's published one")
    func fingerprint() {
        let root = AppleRoots.rootCAG3
        #expect(Hex.encode(root.fingerprint) == AppleRoots.rootCAG3Fingerprint)
        #expect(Hex.encode(Digest.sha256(root.der)) == AppleRoots.rootCAG3Fingerprint)
        // As published (agisboye/app-store-server-api `AppleRootCertificate`, apple.md §2.1).
        let published = "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79"
        #expect(AppleRoots.rootCAG3Fingerprint == published.replacingOccurrences(of: ":", with: "").lowercased())
    }

    @Test("the embedded root is byte for byte the reference AppleRootCA-G3.cer",
          .enabled(if: FileManager.default.fileExists(atPath: referenceFile.path),
                   "skipped: reference file ../../../shared/data/AppleRootCA-G3.cer (relative to this test) is absent"))
    func matchesReferenceFile() throws {
        let loaded = try Certificate.load(Data(contentsOf: Self.referenceFile))
        #expect(loaded.count == 1)
        #expect(loaded.first?.der == AppleRoots.rootCAG3.der)
        #expect(loaded.first?.fingerprint == AppleRoots.rootCAG3.fingerprint)
        #expect(loaded.first.map { Hex.encode($0.fingerprint) } == AppleRoots.rootCAG3Fingerprint)
    }

    @Test("it is a self-signed P-384 certificate authority named Apple Root CA - G3")
    func shape() throws {
        let root = AppleRoots.rootCAG3
        #expect(root.isCertificateAuthority)
        #expect(try root.publicKey().kind == .ecP384)
        #expect(root.subject.contains("/CN=Apple Root CA - G3"))
        #expect(root.subject.contains("/O=Apple Inc."))
        // Self-signed: it validates as its own path.
        let store = try TrustStore(roots: [root])
        try store.verify(leaf: root, intermediates: [], at: Date(timeIntervalSince1970: 1_750_000_000))
    }

    @Test("it is valid from 2014-04-30 until 2039-04-30")
    func validity() throws {
        let root = AppleRoots.rootCAG3
        #expect(root.notBefore == Date(timeIntervalSince1970: 1_398_881_946))  // 2014-04-30 18:19:06 UTC
        #expect(root.notAfter == Date(timeIntervalSince1970: 2_187_800_346))   // 2039-04-30 18:19:06 UTC
        let notAfter = try #require(root.notAfter)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        #expect(calendar.dateComponents([.year, .month, .day], from: notAfter) == DateComponents(year: 2039, month: 4, day: 30))
    }
}
