import Foundation
import Postgres
import StoreModel

/// The purchase's event timeline, written in one statement per snapshot.
struct Timeline {
    let purchaseID: Int64
    let source: SnapshotSource
    private var kinds: [String] = []
    private var details: [String] = []

    init(purchaseID: Int64, source: SnapshotSource) {
        self.purchaseID = purchaseID
        self.source = source
    }

    mutating func add(_ kind: String, _ detail: [String: String?]) {
        kinds.append(kind)
        let object = detail.compactMapValues { $0 }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        details.append(String(decoding: data, as: UTF8.self))
    }

    func write(on db: isolated PostgresConnection) throws {
        guard !kinds.isEmpty else { return }
        _ = try db.query("""
            INSERT INTO purchase_events (purchase_id, kind, source, reference, store_event, detail)
            SELECT $1, kind, $2, $3, $4, detail FROM unnest($5::text[], $6::jsonb[]) AS e(kind, detail)
            """, [purchaseID, source.kind, source.reference, source.event, PostgresArray(kinds), PostgresArray(details)])
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
