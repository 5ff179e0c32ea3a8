import AppStore
import Crypto
import Foundation
import Postgres
@testable import Sync
import Testing

/// The Apple handler's first round trip reads the dedup receipt and the lineage's revision keyed by what the
/// unverified payload claims. Those answers may only stand for the same values verified; for any other value
/// the reads must go to the database as if nothing had been read ahead.
@Suite struct AppleNotificationReadsTests {
    /// An unsigned token claiming `uuid` and a transaction of `lineage` for the pipeline's app: claims only.
    static func claims(uuid: String, lineage: String) throws -> NotificationRouting {
        func token(_ json: String) -> String {
            [#"{"alg":"ES256"}"#, json, "sig"].map { Base64URL.encode(Data($0.utf8)) }.joined(separator: ".")
        }
        let transaction = token(#"{"originalTransactionId":"\#(lineage)"}"#)
        return try NotificationRouting(unverified: token("""
            {"notificationUUID":"\(uuid)","data":{"bundleId":"\(Pipeline.bundleID)","environment":"Production",\
            "signedTransactionInfo":"\(transaction)"}}
            """))
    }

    @Test func readsAheadAnswerForTheClaimedValuesAndTheDatabaseAnswersForAnyOther() async throws {
        try await Pipeline.with { pipeline in
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990,
                                                                 currency: "USD").originalTransactionId
            try await pipeline.settle()
            let pool = pipeline.database.pool
            let seen: String = try await pool.query("SELECT message_id FROM notification_receipts")[0].decode(0)
            let revision: String? = try await pool.query(
                "SELECT history_revision FROM store_purchases WHERE lineage = $1", [lineage])[0].decodeOptional(0)
            #expect(revision != nil, "the simulator's history has a revision to keep")
            let connectionID = pipeline.connection.id
            let reads = PostgresReadBatcher(pool: pool)

            let claimed = try await AppleNotificationReads.read(
                accountID: pipeline.accountID, claims: Self.claims(uuid: seen, lineage: lineage), reads: reads)
            #expect(claimed.connections.map(\.id) == [connectionID])
            #expect(try await claimed.alreadyProcessed(seen, pool: pool))
            #expect(try await claimed.alreadyProcessed(UUID().uuidString, pool: pool) == false)
            #expect(try await claimed.revision(connectionID: connectionID, lineage: lineage, pool: pool) == revision)
            #expect(try await claimed.revision(connectionID: connectionID, lineage: "no-such-lineage", pool: pool) == nil)

            let other = try await AppleNotificationReads.read(
                accountID: pipeline.accountID, claims: Self.claims(uuid: UUID().uuidString, lineage: "other"), reads: reads)
            #expect(try await other.alreadyProcessed(seen, pool: pool), "read from the database, not from the claim")
            #expect(try await other.revision(connectionID: connectionID, lineage: lineage, pool: pool) == revision)
        }
    }
}
