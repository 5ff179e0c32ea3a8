import Crypto
import Foundation
import Synchronization

/// Verdicts on JWS headers: an `ES256` header whose `x5c` path validated, keyed by the header exactly as
/// encoded in the token — so by its whole certificate chain (leaf, intermediate and the ignored third).
/// Apple signs with few leaves and every payload from one leaf carries the same header, so a warm cache
/// turns each notification's header decoding and P-384 chain walk into one lookup, leaving one P-256
/// signature check. Only successes are stored (a chain whose leaf then verified the payload's signature),
/// each with the span in which the whole path is valid; a lookup outside that span is a miss, so caching
/// never changes a verdict.
final class ChainCache: Sendable {
    /// The header's bytes in a plain array (`Data` keeps its storage behind a pointer with tag bits, which
    /// LeakSanitizer cannot see through, so the fuzz run reported every cached entry as leaked). Hashed by its
    /// length and its first and last `hashedEdge` bytes — enough to tell chains apart, since the leaf's serial
    /// number comes early — and compared in full: hashing all 2–3 KB on every lookup cost more than the
    /// lookup needs.
    private struct Key: Hashable {
        static let hashedEdge = 256
        let bytes: [UInt8]

        init(_ header: Data) { bytes = Array(header) }

        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes.count)
            bytes.withUnsafeBytes { bytes in
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.hashedEdge)))
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes.suffix(Self.hashedEdge)))
            }
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.bytes.count == rhs.bytes.count && lhs.bytes.withUnsafeBytes { left in
                rhs.bytes.withUnsafeBytes { right in
                    left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
                }
            }
        }
    }

    private struct Entry {
        let leafKey: PublicKey
        let validity: ClosedRange<Date>
    }

    private let capacity: Int
    private let entries = Mutex<[Key: Entry]>([:])

    /// `capacity` 0 disables caching.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Chains held, for tests that a verdict was (or was not) kept.
    var count: Int { entries.withLock { $0.count } }

    func leafKey(header: Data, at date: Date) -> PublicKey? {
        guard capacity > 0 else { return nil }
        return entries.withLock { entries in
            guard let entry = entries[Key(header)], entry.validity.contains(date) else {
                return nil
            }
            return entry.leafKey
        }
    }

    func store(header: Data, leafKey: PublicKey, validity: ClosedRange<Date>, now: Date) {
        guard capacity > 0 else { return }
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.validity.upperBound > now }
                if entries.count >= capacity, let victim = entries.keys.first { entries[victim] = nil }
            }
            entries[Key(header)] = Entry(leafKey: leafKey, validity: validity)
        }
    }
}
