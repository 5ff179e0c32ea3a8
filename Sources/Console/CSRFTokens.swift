import Accounts
import Crypto
import Foundation

/// The token every form that changes something carries, so that a page elsewhere cannot make on-call's browser
/// retry or discard dead letters (the browser would send its Basic credentials along, and on loopback there are
/// none to send). It is an HMAC of the operator's name and the time it was issued, under a key that lives only in
/// this process: nothing is stored, a restart invalidates every open form, and it expires on its own.
struct CSRFTokens: Sendable {
    private let key: Data
    /// How long a page's forms stay usable.
    static let lifetime: TimeInterval = 12 * 3600

    init() {
        var generator = SystemRandomNumberGenerator()
        key = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    func issue(for operatorName: String, at now: Date) -> String {
        let issued = UInt64(max(0, now.timeIntervalSince1970))
        let stamp = withUnsafeBytes(of: issued.bigEndian) { Data($0) }
        return Base64URL.encode(stamp + tag(operatorName, stamp))
    }

    func accepts(_ token: String, for operatorName: String, at now: Date) -> Bool {
        guard token.utf8.count <= 64, let bytes = try? Base64URL.decode(token), bytes.count == 24 else { return false }
        let stamp = bytes.prefix(8)
        let issued = stamp.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let age = now.timeIntervalSince1970 - Double(issued)
        // A little from the future is a clock step; more is not a token this process issued.
        guard age >= -300, age <= Self.lifetime else { return false }
        return ConstantTime.equal(Data(bytes.suffix(16)), tag(operatorName, Data(stamp)))
    }

    private func tag(_ operatorName: String, _ stamp: Data) -> Data {
        HMACSHA256.tag(Data("storesync console csrf\u{0}\(operatorName)\u{0}".utf8) + stamp, key: key).prefix(16)
    }
}
