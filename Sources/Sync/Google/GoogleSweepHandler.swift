import Foundation
import GooglePlay
import Logging
import Mirror
import Postgres
import Queue
import StoreModel
import Worker

/// The `google.sweep` job: reads `voidedpurchases.list` from the connection's watermark and queues a resync,
/// carrying the voided charge, for every voided subscription order of a lineage the mirror knows — so a
/// refund whose notification was lost is still booked, once. Saves its place after every page.
struct GoogleSweepHandler: JobHandler {
    static let sweep = "google.voided-purchases"
    /// Google lists voided purchases of the last 30 days; a window never starts earlier (less an hour).
    static let window: TimeInterval = 30 * 86_400 - 3600
    /// Voiding is reported with some delay: each window reaches back this far behind the last one's end.
    static let overlap: TimeInterval = 86_400
    static let maxPages = 50
    /// Google refuses a window that ends in its future; ending a little in the past absorbs clock skew.
    static let skewMargin: TimeInterval = 5

    let clients: GoogleStoreClients

    func run(_ args: SweepArgs<GoogleJobs>, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let load = {
            try await SweepWindow.load(args, sweep: Self.sweep, pool: context.pool, now: Date().addingTimeInterval(-Self.skewMargin),
                                       overlap: Self.overlap, retention: { _ in Self.window })
        }
        var window = try await load()
        let connection = window.connection
        let tools = try await clients.tools(for: connection, pool: context.pool)
        let client = tools.client
        var queued = 0
        for _ in 0..<Self.maxPages {
            let page: VoidedPurchasesPage
            do {
                page = try await client.voidedPurchases(startTime: window.start, endTime: window.end, token: window.cursor)
            } catch let error as GooglePlayAPIError where window.isResumed && error.code == .rejected {
                // A 400 to a resumed page: its token expired, or its start fell out of Google's 30 days.
                window = try await SweepWindow.restart(after: window, sweep: Self.sweep, pool: context.pool,
                                                       logger: context.logger, error: error.description, load: load)
                continue
            } catch let error as GooglePlayAPIError {
                throw tools.failure(error, previous: job.lastError, logger: context.logger)
            }
            // A record Google lists without its voided time was voided by the end of the window that listed it.
            let listedBy = window.end
            let next = window.advance(to: page.nextPageToken)
            queued += try await context.pool.transaction { db in
                var added = 0
                for voided in page.voidedPurchases {
                    guard let token = voided.purchaseToken, let order = VoidedOrder(voided, listedBy: listedBy),
                          let lineage = try PurchaseTokens.lineage(of: token, connectionID: connection.id, on: db)
                    else { continue }
                    let task = Self.resyncArgs(order, connectionID: connection.id, lineage: lineage)
                    if try JobQueue.enqueue(NewJob(task, priority: ResyncPlanner.priority,
                                                   uniqueKey: "google.voided:\(connection.id):\(order.orderID)"), on: db) != nil {
                        added += 1
                    }
                }
                try Watermark.write(next, connectionID: connection.id, sweep: Self.sweep, on: db)
                return added
            }
            if window.cursor == nil { break }
        }
        context.logger.info("voided purchases swept", ["connection": .int(Int(connection.id)), "queued": .int(queued)])
        return .done("queued \(queued) voided charge(s)")
    }

    /// The `google.resync` that fetches `order`'s lineage and refunds the order as listed.
    static func resyncArgs(_ order: VoidedOrder, connectionID: Int64, lineage: String) -> ResyncArgs<GoogleJobs> {
        ResyncArgs(connectionID: connectionID, lineage: lineage, reason: "voided", voided: [ResyncArgs.Voided(order)])
    }
}

extension ResyncArgs.Voided {
    init(_ order: VoidedOrder) {
        self.init(orderID: order.orderID, voidedAtMilliseconds: Int64((order.voidedAt.timeIntervalSince1970 * 1000).rounded()),
                  refundType: order.refundType, voidedQuantity: order.voidedQuantity, reason: order.reason)
    }

    /// The order as the sweep listed it.
    var order: VoidedOrder {
        VoidedOrder(orderID: orderID, voidedAt: GoogleTimestamp.date(milliseconds: voidedAtMilliseconds), refundType: refundType,
                    voidedQuantity: voidedQuantity, reason: reason)
    }
}
