import Foundation
import Logging
import Postgres
import StoreModel

/// The purchase's event timeline, written in one statement per snapshot, sent with the transaction's next
/// statement (nothing needs its answer).
struct Timeline {
    let purchaseID: Int64
    let source: SnapshotSource
    private var kinds: [String] = []
    private var details: [String] = []

    init(purchaseID: Int64, source: SnapshotSource) {
        self.purchaseID = purchaseID
        self.source = source
    }

    /// Records an event; its detail becomes a JSON object of the non-nil values, keys sorted.
    mutating func add(_ kind: String, _ detail: [String: String?]) {
        kinds.append(kind)
        var json = "{"
        for (index, (key, value)) in detail.compactMapValues({ $0 }).sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { json += "," }
            JSON.appendString(key, to: &json)
            json += ":"
            JSON.appendString(value, to: &json)
        }
        details.append(json + "}")
    }

    func write(on db: isolated PostgresConnection) throws {
        guard !kinds.isEmpty else { return }
        try db.queryLater("""
            INSERT INTO purchase_events (purchase_id, kind, source, reference, store_event, detail)
            SELECT $1, kind, $2, $3, $4, detail FROM unnest($5::text[], $6::jsonb[]) AS e(kind, detail)
            """, [purchaseID, source.kind, source.reference, source.event, PostgresArray(kinds), PostgresArray(details)])
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
