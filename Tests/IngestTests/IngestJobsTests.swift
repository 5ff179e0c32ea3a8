import Foundation
@testable import Ingest
import IngestJobs
import Postgres
import Queue
import TestSupport
import Testing

/// The jobs ingest hands the workers, read back from the database as the workers read them: the notifications
/// `storesync_ingest` builds in SQL, and the outage record.
@Suite struct IngestJobsTests {
    @Test(arguments: WebhookSource.allCases)
    func whatStoresyncIngestWritesDecodesAsTheNotificationArgs(source: WebhookSource) async throws {
        try await TestDatabase.with { database in
            let account: Int64 = try await database.pool.query(
                "INSERT INTO accounts (host) VALUES ('billing.test') RETURNING id")[0].decode(0)
            let receivedAt = Date(timeIntervalSince1970: 1_795_960_800.123456)
            let stored = await IngestService.store([
                IngestService.Arrival(host: "billing.test", kind: source.jobKind.name, body: Data("{}".utf8), headers: nil,
                                      receivedAt: receivedAt),
            ], pool: database.pool)
            #expect(try stored[0].get() != nil)
            let row = try await database.pool.query("SELECT kind, payload::text FROM jobs")[0]
            let kind = try row.decode(0, as: String.self)
            let payload = try row.decode(1, as: String.self)
            let args = switch source {
            case .apple: try LeasedJob.stored(kind, payload).args(AppleNotificationArgs.self).fields
            case .googlePlay: try LeasedJob.stored(kind, payload).args(GoogleNotificationArgs.self).fields
            }
            #expect(args.accountID == account)
            #expect(abs((args.receivedAt?.timeIntervalSince1970 ?? 0) - receivedAt.timeIntervalSince1970) < 0.000_001)
            #expect(args.source == nil)
        }
    }

    @Test func theOutageRecordIngestQueuesDecodesAsTheOutageSweepArgs() async throws {
        try await TestDatabase.with { database in
            let outages = OutageLog()
            let (from, to) = (Date(timeIntervalSince1970: 1_795_960_800.125), Date(timeIntervalSince1970: 1_795_960_860.5))
            _ = outages.record(host: "b.test", at: to)
            _ = outages.record(host: "a.test", at: from)
            await outages.handOver(pool: database.pool)
            let row = try await database.pool.query("SELECT kind, payload::text FROM jobs")[0]
            let args = try LeasedJob.stored(try row.decode(0), try row.decode(1)).args(OutageSweepArgs.self)
            #expect(args.hosts == ["a.test", "b.test"])
            #expect(args.from == from && args.to == to)
        }
    }
}

extension LeasedJob {
    /// A job as the worker leases it, holding what the database stored.
    fileprivate static func stored(_ kind: String, _ payload: String) -> LeasedJob {
        LeasedJob(id: 1, kind: kind, payload: payload, raw: nil, headers: nil, priority: 0, attempt: 1, maxAttempts: 25,
                  createdAt: Date(), uniqueKey: nil)
    }
}

extension NotificationArgs {
    fileprivate var fields: (accountID: Int64, receivedAt: Date?, source: String?) { (accountID, receivedAt, source) }
}
