import Foundation
import Queue
import Worker

/// The dedup receipt a handled notification (Apple `notificationUUID`, Pub/Sub `messageId`) commits with its
/// outcome, in the same transaction as the job's writes.
struct Receipt: Sendable {
    let store: String
    let messageID: String
    let receivedAt: Date
    let jobID: Int64

    /// Completes the job: records the notification as seen with `outcome`, then runs `writes` — unless a
    /// concurrent delivery of the same notification recorded it first, in which case nothing else is written.
    /// `serialKey` names what `writes` lock (see `JobResult.serialKey`).
    func complete(_ outcome: String, serialKey: String? = nil, then writes: JobWrites? = nil) -> JobResult {
        .done(outcome, writes: { db in
            guard try Receipts.record(store: store, messageID: messageID, receivedAt: receivedAt, jobID: jobID,
                                      outcome: outcome, on: db) else { return }
            try writes?(db)
        }, serialKey: serialKey)
    }
}
