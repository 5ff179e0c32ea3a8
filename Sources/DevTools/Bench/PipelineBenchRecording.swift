import Foundation
import Queue
import Synchronization
import Worker

/// Timestamps each notification job's committed outcome as the worker reports it, so the benchmark knows
/// when the last one landed without polling the database.
final class PipelineRecorder: WorkerObserver {
    struct Snapshot: Sendable {
        /// Completed or dead-lettered: outcomes that end a job.
        var finished = 0
        var deadLettered = 0
        /// Attempts that failed and were rescheduled, and outcomes that could not be recorded (the job
        /// comes back after its lease).
        var retried = 0
        var lastOutcome: ContinuousClock.Instant?
        /// Completions of other kinds (the follow-ups notifications queue), by kind.
        var otherCompleted: [String: Int] = [:]
    }

    private struct State {
        var snapshot = Snapshot()
        var lastProgress = ContinuousClock.now
        var expected: Int?
        var waiter: CheckedContinuation<Bool, Never>?

        /// The waiter, taken, when its wait is over.
        mutating func takeWaiterIfDone() -> CheckedContinuation<Bool, Never>? {
            guard let expected, snapshot.finished >= expected else { return nil }
            defer { waiter = nil }
            return waiter
        }
    }

    private let kind: String
    private let state = Mutex(State())

    init(kind: String) {
        self.kind = kind
    }

    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    func jobFinished(kind: String, report: FinishReport?, sinceLease: Duration) {
        guard kind == self.kind else {
            if case .completed? = report { state.withLock { $0.snapshot.otherCompleted[kind, default: 0] += 1 } }
            return
        }
        let now = ContinuousClock.now
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.lastProgress = now
            switch report {
            case .completed?:
                state.snapshot.finished += 1
                state.snapshot.lastOutcome = now
            case .deadLettered?, .writesFailed(_, .deadLettered)?:
                state.snapshot.finished += 1
                state.snapshot.deadLettered += 1
                state.snapshot.lastOutcome = now
            case .retried?, .writesFailed(_, .retried)?, .leaseLost?, nil:
                state.snapshot.retried += 1
            }
            return state.takeWaiterIfDone()
        }
        waiter?.resume(returning: true)
    }

    /// Waits until `expected` notification jobs have finished; false if no job reported anything for
    /// `stallTimeout` first (a stuck pipeline must not hang the benchmark).
    func waitForOutcomes(_ expected: Int, stallTimeout: Duration) async -> Bool {
        let watchdog = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let stalled = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard ContinuousClock.now - state.lastProgress > stallTimeout else { return nil }
                    defer { state.waiter = nil }
                    return state.waiter
                }
                if let stalled {
                    stalled.resume(returning: false)
                    return
                }
            }
        }
        let settled = await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                state.expected = expected
                state.lastProgress = max(state.lastProgress, .now)
                guard state.snapshot.finished < expected else { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume(returning: true) }
        }
        watchdog.cancel()
        return settled
    }
}

/// What one sender (and, merged, all of them) saw of ingest's answers.
struct SentNotifications: Sendable {
    var accepted = 0
    /// Scenario calls whose notification did not get a 200, or that failed outright.
    var refused = 0
    var firstError: String?
    /// The accepted notifications' receipt ids (`notification_receipts.message_id`).
    var messageIDs: [String] = []
    var firstAccepted: ContinuousClock.Instant?
    var lastAccepted: ContinuousClock.Instant?

    mutating func record(_ delivery: PipelineDelivery) {
        let now = ContinuousClock.now
        guard delivery.httpStatus == 200 else {
            fail("notification answered \(delivery.httpStatus.map(String.init) ?? delivery.error ?? "nothing")")
            return
        }
        accepted += 1
        messageIDs.append(delivery.messageID)
        firstAccepted = min(firstAccepted ?? now, now)
        lastAccepted = max(lastAccepted ?? now, now)
    }

    mutating func fail(_ error: String) {
        refused += 1
        if firstError == nil { firstError = error }
    }

    mutating func merge(_ other: SentNotifications) {
        accepted += other.accepted
        refused += other.refused
        firstError = firstError ?? other.firstError
        messageIDs += other.messageIDs
        firstAccepted = [firstAccepted, other.firstAccepted].compactMap { $0 }.min()
        lastAccepted = [lastAccepted, other.lastAccepted].compactMap { $0 }.max()
    }
}

/// Hands out subscription numbers to the concurrent senders.
final class LineageTicket: Sendable {
    private let counter = Atomic<Int>(0)

    func take() -> Int { counter.add(1, ordering: .relaxed).oldValue }
}

/// Spaces the senders' scenario calls `1/rate` apart on one schedule from `start`, so a paced run offers a
/// steady load however many senders share it.
final class Pacer: Sendable {
    private let next = Atomic<Int>(0)
    private let start: ContinuousClock.Instant
    private let interval: Duration

    init(rate: Int, start: ContinuousClock.Instant) {
        self.start = start
        interval = .seconds(1) / rate
    }

    /// Waits for the next free slot on the schedule (at once when the schedule is behind).
    func wait() async {
        let slot = next.add(1, ordering: .relaxed).oldValue
        try? await Task.sleep(until: start + interval * slot, clock: .continuous)
    }
}
