import Foundation
import Postgres
import Queue
import Worker

/// The dedup receipt a handled notification (Apple `notificationUUID`, Pub/Sub `messageId`) commits with its
/// outcome, in the same transaction as the job's writes.
struct PendingReceipt: Sendable {
    /// A notification's database effects, applied only by the delivery that records its receipt.
    typealias Effects = @Sendable (isolated PostgresConnection) throws -> Void

    let store: String
    /// What `messageID` is unique within (see `ReceiptScope`).
    let scope: String
    let messageID: String
    let receivedAt: Date
    let jobID: Int64

    /// Completes the job: records the notification as seen with `outcome`, then applies `effects` — unless a
    /// concurrent delivery of the same notification recorded it first, in which case nothing is written and the
    /// job completes as `duplicate`, exactly like a delivery that found the receipt before it began (the receipt
    /// goes out with the effects' first statement and fails it: `NotificationReceipts.record`). Effects that fail before
    /// sending any statement drop the receipt with their savepoint: such a duplicate is retried once, and found by the
    /// handler's own lookup then. `serialKey` names what `effects` lock (see `JobResult.serialKey`), and
    /// `readAhead` what they begin with (see `JobResult.readAhead`).
    func complete(_ outcome: String, serialKey: String? = nil, readAhead: PostgresReadAhead? = nil,
                  then effects: Effects? = nil) -> JobResult {
        .done(outcome, writes: { db in
            try NotificationReceipts.record(store: store, scope: scope, messageID: messageID, receivedAt: receivedAt,
                                            jobID: jobID, outcome: outcome, on: db)
            try effects?(db)
        }, serialKey: serialKey, readAhead: readAhead)
    }
}
