import Crypto
import Foundation

/// Apple's root certificates, shipped inside the binary so trust never depends on a file on disk.
public enum AppleRoots {
    /// Apple Root CA - G3 (P-384, valid 2014-04-30 to 2039-04-30), the root of every App Store signing
    /// chain; SHA-256 fingerprint 63:34:3A:BF:…:91:79.
    public static let rootCAG3: Certificate = {
        do {
            return try Certificate(der: Data(PackageResources.AppleRootCA_G3_cer))
        } catch {
            fatalError("the embedded Apple Root CA - G3 does not parse: \(error)")
        }
    }()

    /// The roots a connection trusts: the PEM certificates it was configured with (a simulator's), or Apple
    /// Root CA - G3 when it names none.
    public static func trusted(pem: String?) throws -> [Certificate] {
        guard let pem else { return [rootCAG3] }
        return try Certificate.load(Data(pem.utf8))
    }

    public static let rootCAG3Fingerprint = "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179"
}
