import Foundation
import IngestJobs
import Queue

/// What ingest stored with a notification job: the account its Host header mapped to, when it arrived (the
/// job's creation, in the same statement), and the body byte for byte — signatures are checked on exactly
/// what the store sent.
struct IngestEnvelope: Sendable {
    let accountID: Int64
    let receivedAt: Date
    let body: Data
    let headers: String?

    init<Source>(_ args: NotificationArgs<Source>, job: LeasedJob) throws {
        guard let body = job.raw, !body.isEmpty else { throw JobFailure.permanent("the job carries no notification body") }
        accountID = args.accountID
        receivedAt = job.createdAt
        self.body = body
        headers = job.headers
    }

    /// The `Authorization` header ingest kept (Google pushes), if any.
    var authorization: String? { IngestedHeaders.authorization(headers) }
}
