import Crypto
import Foundation

/// A short digest of a query's filters, carried inside the paging tokens the simulator issues: Apple requires
/// a token to come back with the query it was issued for, and this lets a mismatch be refused.
enum QueryFingerprint {
    static func of(_ parts: [String]) -> String {
        Hex.encode(Digest.sha256(Data(parts.joined(separator: "\u{1}").utf8)).prefix(8))
    }
}
