import Foundation
import Queue
import StoreModel

// Every job Sync queues and runs, by kind and payload, in one place; the notifications and the outage
// record ingest queues are declared in `IngestJobs`. A new job kind gets its args here and its handler in
// `SyncHandlers.register`.

/// The kinds of a store's resyncs and sweeps: jobs of one shape for either store, queued as that store's.
protocol StoreJobs: Sendable {
    static var resync: JobKind { get }
    static var sweep: JobKind { get }
}

enum AppleJobs: StoreJobs {
    static let resync: JobKind = "apple.resync"
    static let sweep: JobKind = "apple.sweep"
}

enum GoogleJobs: StoreJobs {
    static let resync: JobKind = "google.resync"
    static let sweep: JobKind = "google.sweep"
}

extension Store {
    /// The store's resync and sweep kinds, for code that knows the store only when it runs.
    var jobs: any StoreJobs.Type {
        switch self {
        case .apple: AppleJobs.self
        case .google: GoogleJobs.self
        }
    }
}

/// `apple.resync`, `google.resync`: re-fetch one lineage and apply it. Queued by `ResyncPlanner` (the daily
/// fan-out, `storesync sync`, Apple's follow-ups) and by Google's voided-purchases sweep, which adds the voided
/// charges the resync must refund.
struct ResyncArgs<Kinds: StoreJobs>: JobArgs {
    static var kind: JobKind { Kinds.resync }

    /// A charge Google voided, which the resync must fetch and refund (Google's voided-purchases sweep): the
    /// listed `VoidedOrder` whole, so the refund keeps its time and Google's reason.
    struct Voided: Codable, Sendable {
        let orderID: String
        let voidedAtMilliseconds: Int64
        let refundType: Int?
        let voidedQuantity: Int?
        let reason: String?

        enum CodingKeys: String, CodingKey {
            case orderID = "order_id", voidedAtMilliseconds = "voided_at_ms", refundType = "refund_type"
            case voidedQuantity = "voided_quantity", reason
        }
    }

    let connectionID: Int64
    let lineage: String
    /// Why it was queued (`daily`, `manual`, `voided`, `AppleFollowUp`'s reasons): in the snapshot's source.
    let reason: String?
    let voided: [Voided]?

    init(connectionID: Int64, lineage: String, reason: String?, voided: [Voided]? = nil) {
        self.connectionID = connectionID
        self.lineage = lineage
        self.reason = reason
        self.voided = voided
    }

    enum CodingKeys: String, CodingKey {
        case connectionID = "connection_id", lineage, reason, voided
    }
}

/// `apple.sweep`, `google.sweep`: read the store's history of one connection from its watermark (Apple's
/// undelivered notifications, Google's voided purchases). Queued by the daily reconciliation and, for Apple,
/// after a database outage.
struct SweepArgs<Kinds: StoreJobs>: JobArgs {
    static var kind: JobKind { Kinds.sweep }

    let connectionID: Int64

    enum CodingKeys: String, CodingKey {
        case connectionID = "connection_id"
    }
}

/// `apple.consumption`: answer Apple's `CONSUMPTION_REQUEST` for one transaction before its deadline.
struct AppleConsumptionArgs: JobArgs {
    static let kind: JobKind = "apple.consumption"

    let connectionID: Int64
    let transactionID: String
    let deadlineMilliseconds: Int64
    let notificationUUID: String
    /// The disputed transaction's `type`, which decides the rules for `consumptionPercentage`.
    let productType: String

    var deadline: Date { Date(timeIntervalSince1970: Double(deadlineMilliseconds) / 1000) }

    enum CodingKeys: String, CodingKey {
        case connectionID = "connection_id", transactionID = "transaction_id"
        case deadlineMilliseconds = "deadline_milliseconds", notificationUUID = "notification_uuid"
        case productType = "product_type"
    }
}

/// `google.acknowledge`: acknowledge one purchase token before Google refunds it.
struct GoogleAcknowledgementArgs: JobArgs {
    static let kind: JobKind = "google.acknowledge"

    let connectionID: Int64
    let purchaseID: Int64
    let productID: String
    let token: String
    /// The purchase's lineage, which never changes: the job commits under its serial key without reading it.
    /// Absent from tasks queued by releases before it was carried; those read it from the purchase.
    let lineage: String?

    enum CodingKeys: String, CodingKey {
        case connectionID = "connection_id", purchaseID = "purchase_id", productID = "product_id", token, lineage
    }
}

/// The kind of a schedule's job that needs nothing but its period (`PeriodArgs`).
protocol PeriodicJob: Sendable {
    static var kind: JobKind { get }
}

/// `sync.daily`: the `daily-sync` schedule's fan-out of resyncs for one UTC day.
enum DailySyncJob: PeriodicJob {
    static let kind: JobKind = "sync.daily"
}

/// `sync.reconcile`: the `reconcile` schedule's sweep of every connection for one UTC day.
enum ReconcileJob: PeriodicJob {
    static let kind: JobKind = "sync.reconcile"
}

/// The args of a `PeriodicJob`: the schedule and the period that queued it. An operator's job without them
/// (`storesync enqueue sync.daily --payload -` of `{}`) runs for today.
struct PeriodArgs<Job: PeriodicJob>: ScheduledJobArgs {
    static var kind: JobKind { Job.kind }

    let schedule: String?
    let period: String?

    init(schedule: String, period: String) {
        self.schedule = schedule
        self.period = period
    }

    /// The period's key, or today's (UTC) when the job names none.
    var day: String { period ?? Schedule.Period.daily.key(for: Date()) }
}

extension StoreJobs {
    /// The sweep of a connection's store history, as this store's job.
    static func sweepJob(connectionID: Int64, priority: Int16 = 0, uniqueKey: String) throws -> NewJob {
        try NewJob(SweepArgs<Self>(connectionID: connectionID), priority: priority, uniqueKey: uniqueKey)
    }
}
