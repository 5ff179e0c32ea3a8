import Crypto
import Foundation
import Synchronization

/// Verdicts of certificate-path validation, keyed by the (leaf, intermediate) pair exactly as they appear in
/// `x5c`. Apple signs with few leaves, so a warm cache turns each notification's P-384 chain walk into a
/// lookup, leaving one P-256 signature check. Only successes are stored, each with the span in which the
/// whole path is valid; a lookup outside that span is a miss, so caching never changes a verdict.
final class ChainCache: Sendable {
    private struct Key: Hashable {
        let leaf: String
        let intermediate: String
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

    func leafKey(leaf: String, intermediate: String, at date: Date) -> PublicKey? {
        guard capacity > 0 else { return nil }
        return entries.withLock { entries in
            guard let entry = entries[Key(leaf: leaf, intermediate: intermediate)], entry.validity.contains(date) else {
                return nil
            }
            return entry.leafKey
        }
    }

    func store(leaf: String, intermediate: String, leafKey: PublicKey, validity: ClosedRange<Date>, now: Date) {
        guard capacity > 0 else { return }
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.validity.upperBound > now }
                if entries.count >= capacity, let victim = entries.keys.first { entries[victim] = nil }
            }
            entries[Key(leaf: leaf, intermediate: intermediate)] = Entry(leafKey: leafKey, validity: validity)
        }
    }
}
