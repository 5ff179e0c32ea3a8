import Foundation
import Postgres
import Queue

extension TestDatabase {
    /// Records a notification's receipt in a transaction of its own, as a job's completion would: true when
    /// recorded, false when the message was recorded already (`NotificationReceipts.isDuplicate`).
    public func recordReceipt(store: String, scope: String, messageID: String, receivedAt: Date = Date(), jobID: Int64?,
                              outcome: String) async throws -> Bool {
        do {
            try await pool.transaction { connection in
                try NotificationReceipts.record(store: store, scope: scope, messageID: messageID, receivedAt: receivedAt,
                                                jobID: jobID, outcome: outcome, on: connection)
            }
            return true
        } catch where NotificationReceipts.isDuplicate(error) {
            return false
        }
    }
}
