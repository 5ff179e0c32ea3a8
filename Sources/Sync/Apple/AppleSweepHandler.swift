import AppStore
import Crypto
import Foundation
import IngestJobs
import Logging
import Postgres
import Queue
import StoreModel
import Worker

/// The `apple.sweep` job: asks Apple's notification history for every notification it failed to deliver
/// since the connection's watermark and queues each as an `apple.notification` job — verified and
/// deduplicated by `notificationUUID` exactly like a delivered one. The watermark and the page cursor are
/// saved after every page, so a crash resumes where it stopped and a missed day is caught up once.
struct AppleSweepHandler: JobHandler {
    static let sweep = "apple.notification-history"
    /// Each window reaches this far behind the last one's end: Apple keeps retrying a notification for about
    /// 6.5 days (1, 12, 24, 48, 72 hours), so one signed before the last sweep may only have failed since.
    /// What is queued twice is deduplicated by `notificationUUID`.
    static let overlap: TimeInterval = 7 * 86_400
    /// Pages per run; the cursor carries the rest to the next run.
    static let maxPages = 200

    /// Apple keeps 180 days of production history and 30 of sandbox; a window never starts earlier (less an
    /// hour for clock differences), which Apple would refuse.
    static func retention(_ environment: StoreEnvironment) -> TimeInterval {
        (environment == .production ? 180 : 30) * 86_400 - 3600
    }

    /// Apple's refusals of a resumed page: an invalid (4000014) or expired (4000017) pagination token, or a start
    /// date now too far in the past (4000012). Permanent as asked, but the window can start again.
    static let refusedResume: Set<Int64> = [4_000_012, 4_000_014, 4_000_017]

    let clients: AppleStoreClients

    func run(_ args: SweepArgs<AppleJobs>, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let load = { try await SweepWindow.load(args, sweep: Self.sweep, pool: context.pool, now: Date(), overlap: Self.overlap,
                                                retention: { Self.retention($0.environment) }) }
        var window = try await load()
        let connection = window.connection
        let client = try await clients.tools(for: connection, pool: context.pool).client
        var queued = 0
        for _ in 0..<Self.maxPages {
            let page: NotificationHistoryPage
            do {
                page = try await client.notificationHistory(start: window.start, end: window.end, onlyFailures: true,
                                                            paginationToken: window.cursor)
            } catch let error as AppStoreAPIError
                where window.isResumed && error.appleErrorCode.map(Self.refusedResume.contains) == true {
                window = try await SweepWindow.restart(after: window, sweep: Self.sweep, pool: context.pool,
                                                       logger: context.logger, error: error.description, load: load)
                continue
            } catch let error as AppStoreAPIError {
                throw StoreFailures.api(error, previous: job.lastError, vouched: false)
            }
            let next = window.advance(to: page.paginationToken)
            queued += try await context.pool.transaction { db in
                var added = 0
                for signedPayload in page.signedPayloads {
                    let body = try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload])
                    let digest = Hex.encode(Digest.sha256(Data(signedPayload.utf8)))
                    if try JobQueue.enqueue(NewJob(AppleNotificationArgs(accountID: connection.accountID, source: "history"),
                                                   raw: body, uniqueKey: "apple.history:\(digest)"), on: db) != nil {
                        added += 1
                    }
                }
                try Watermark.write(next, connectionID: connection.id, sweep: Self.sweep, on: db)
                return added
            }
            if window.cursor == nil { break }
        }
        context.logger.info("notification history swept", ["connection": .int(Int(connection.id)), "queued": .int(queued)])
        return .done("queued \(queued) undelivered notification(s)")
    }
}
