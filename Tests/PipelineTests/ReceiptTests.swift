import Foundation
import Postgres
import Queue
@testable import Sync
import TestSupport
import Testing
import Worker

/// One notification delivered twice at once: both deliveries find no receipt before their work, as the Apple
/// and Google handlers check it. The one whose completion commits second must write nothing and complete as
/// `duplicate`, exactly like a delivery that found the receipt before it began.
@Suite struct ReceiptTests {
    static let messageID = "0b1c2d3e-notification"

    /// A notification handler's shape: receipt check, then (held until the test says) completion through
    /// `PendingReceipt` with one effect row. The payload names the delivery.
    struct DeliveryHandler: JobHandler {
        struct Args: JobArgs {
            static let kind: JobKind = "test.delivery"
            let delivery: String
        }

        let store: String
        let scope: String
        let checked: Counter
        let gates: [String: Gate]

        func run(_ args: Args, job: LeasedJob, context: JobContext) async throws -> JobResult {
            let seen = NotificationReceipts.looking(store: store, scope: scope, messageID: ReceiptTests.messageID)
            if try await context.pool.query(seen) != nil {
                return .done("duplicate")
            }
            checked.increment()
            await gates[args.delivery]?.wait()
            let receipt = PendingReceipt(store: store, scope: scope, messageID: ReceiptTests.messageID, receivedAt: Date(),
                                  jobID: job.id)
            let (id, attempt) = (job.id, job.attempt)
            return receipt.complete("mirrored") { db in
                try db.query("INSERT INTO test_effects (job_id, attempt, worker) VALUES ($1, $2, 'effect')", [id, attempt])
            }
        }
    }

    /// The reports the worker gives its observer (and so its logs and metrics), in the order jobs finished.
    /// (NSLock rather than `Mutex`, which ThreadSanitizer cannot see through on Linux.)
    final class FinishedJobs: WorkerObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [FinishReport?] = []

        func jobFinished(kind: String, report: FinishReport?, sinceLease: Duration) {
            lock.lock()
            recorded.append(report)
            lock.unlock()
        }

        var reports: [FinishReport?] {
            lock.lock()
            defer { lock.unlock() }
            return recorded
        }
    }

    @Test(arguments: [
        ("apple", ReceiptScope.apple),
        ("google", ReceiptScope.google(accountID: 1, subscription: "projects/p/subscriptions/play-rtdn",
                                       packageName: "com.example")),
    ])
    func theDeliveryThatCommitsSecondCompletesAsADuplicateAndWritesNothing(store: String, scope: String) async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            let queue = JobQueue(pool: database.pool)
            let (first, second) = ("first", "second")
            _ = try #require(try await queue.enqueue(NewJob(DeliveryHandler.Args(delivery: first))))
            let secondID = try #require(try await queue.enqueue(NewJob(DeliveryHandler.Args(delivery: second))))
            let gates = [first: Gate(), second: Gate()]
            let checked = Counter()
            let observer = FinishedJobs()
            var handlers = JobHandlers()
            handlers.register(DeliveryHandler(store: store, scope: scope, checked: checked, gates: gates))
            var configuration = WorkerConfiguration()
            configuration.concurrency = 4
            configuration.pollInterval = .milliseconds(50)
            let worker = Worker(configuration: configuration, handlers: handlers, pool: database.pool,
                                listenURL: database.url, observer: observer)
            let running = Task { await worker.run() }

            try await eventually("both deliveries to pass their receipt check") { checked.value == 2 }
            gates[second]?.open()
            try await eventually("the second delivery to complete") { observer.reports.count == 1 }
            gates[first]?.open()
            try await eventually("the first delivery to complete") { observer.reports.count == 2 }
            worker.stop()
            await running.value

            #expect(observer.reports == [.completed(outcome: "mirrored"), .completed(outcome: "duplicate")])
            let effects = try await database.pool.query("SELECT job_id FROM test_effects")
                .map { try $0.decode(0, as: Int64.self) }
            #expect(effects == [secondID])
            let receipts = try await database.pool.query(
                "SELECT job_id, outcome FROM notification_receipts WHERE store = $1 AND scope = $2 AND message_id = $3",
                [store, scope, Self.messageID])
            #expect(receipts.count == 1)
            #expect(try receipts.first?.decode(0, as: Int64.self) == secondID)
            #expect(try receipts.first?.decode(1, as: String.self) == "mirrored")
            #expect(try await database.pool.query("SELECT count(*) FROM jobs")[0].decode(0, as: Int.self) == 0)
        }
    }
}
