import Foundation
import Logging
import Postgres
import StoreModel

/// The purchase's event timeline, written in one statement per snapshot, sent with the transaction's next
/// statement (nothing needs its answer). Events are plain values until `write`, so a `MirrorPlan` can hold
/// the ones it decides before the purchase row, and its id, exist.
struct Timeline: Equatable {
    /// One event: its kind and the non-nil values of its detail.
    struct Event: Equatable {
        let kind: String
        let detail: [String: String]

        /// The detail as a JSON object, keys sorted.
        var json: String {
            var json = "{"
            for (index, (key, value)) in detail.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { json += "," }
                JSON.appendString(key, to: &json)
                json += ":"
                JSON.appendString(value, to: &json)
            }
            return json + "}"
        }
    }

    private(set) var events: [Event] = []

    /// Records an event; nil values are left out of its detail.
    mutating func add(_ kind: String, _ detail: [String: String?]) {
        events.append(Event(kind: kind, detail: detail.compactMapValues { $0 }))
    }

    func write(purchaseID: Int64, source: SnapshotSource, on db: isolated PostgresConnection) throws {
        guard !events.isEmpty else { return }
        try db.queryLater("""
            INSERT INTO purchase_events (purchase_id, kind, source, reference, store_event, detail)
            SELECT $1, kind, $2, $3, $4, detail FROM unnest($5::text[], $6::jsonb[]) AS e(kind, detail)
            """, [purchaseID, source.kind, source.reference, source.event, PostgresArray(events.map(\.kind)),
                  PostgresArray(events.map(\.json))])
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
