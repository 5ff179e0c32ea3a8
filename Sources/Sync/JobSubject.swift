import Foundation
import Queue

/// What one of Sync's store jobs is about, read from its payload through its args type: the on-call console links
/// a dead letter to the purchase it concerns with it, and nothing else decodes these payloads by hand.
/// Notifications are not here: what they concern is inside the store's signed body, not the payload.
public enum JobSubject: Sendable, Equatable {
    /// A lineage of a connection (resyncs).
    case lineage(connectionID: Int64, lineage: String)
    /// A purchase the job names by id (Google acknowledgements).
    case purchase(connectionID: Int64, purchaseID: Int64)
    /// A store transaction of a connection (Apple consumption answers).
    case transaction(connectionID: Int64, transactionID: String)
    /// A whole connection (sweeps).
    case connection(Int64)

    /// The subject of a job of `kind` with `payload`; nil for other kinds, or a payload its args type cannot read.
    public static func of(kind: String, payload: String) -> JobSubject? {
        func decoded<Args: JobArgs>(_ type: Args.Type) -> Args? { try? JobPayload.decode(type, from: payload) }
        switch kind {
        case AppleJobs.resync.name:
            return decoded(ResyncArgs<AppleJobs>.self).map { .lineage(connectionID: $0.connectionID, lineage: $0.lineage) }
        case GoogleJobs.resync.name:
            return decoded(ResyncArgs<GoogleJobs>.self).map { .lineage(connectionID: $0.connectionID, lineage: $0.lineage) }
        case AppleJobs.sweep.name: return decoded(SweepArgs<AppleJobs>.self).map { .connection($0.connectionID) }
        case GoogleJobs.sweep.name: return decoded(SweepArgs<GoogleJobs>.self).map { .connection($0.connectionID) }
        case AppleConsumptionArgs.kind.name:
            return decoded(AppleConsumptionArgs.self).map {
                .transaction(connectionID: $0.connectionID, transactionID: $0.transactionID)
            }
        case GoogleAcknowledgementArgs.kind.name:
            return decoded(GoogleAcknowledgementArgs.self).map { .purchase(connectionID: $0.connectionID, purchaseID: $0.purchaseID) }
        default: return nil
        }
    }
}
