import Foundation
import Logging
import Postgres
import Queue
import Synchronization

/// Leases jobs, runs them in bounded slots, and records their outcomes.
///
/// One fetch loop leases as many jobs as there are free slots in one statement, woken by `NOTIFY` with a
/// polling fallback; each job runs as a task; outcomes are group-committed by the `Completer`; a heartbeat
/// keeps long jobs' leases alive; every process competes for schedule periods. Leasing and the heartbeat
/// each have a connection of their own, so neither waits for the pool that handlers and completions share.
/// `stop()` begins a graceful shutdown: no more leasing, in-flight jobs get `gracePeriod` to finish, the rest
/// are released.
public final class Worker: Sendable {
    public let configuration: WorkerConfiguration
    private let handlers: JobHandlers
    private let pool: PostgresPool
    /// The jobs' first reads, batched across the jobs running at once.
    private let reads: PostgresReadBatcher
    private let queue: JobQueue
    private let listenURL: String
    private let wake = WakeSignal()
    private let state = Mutex(State())
    private let logger: Logger

    private struct State {
        var stopping = false
        var inFlight: Set<LeaseRef> = []
    }

    /// - Parameter listenURL: where the dedicated `LISTEN` connection goes (a direct connection, not a
    ///   transaction-pooling proxy); usually the pool's URL.
    private let observer: (any WorkerObserver)?

    public init(configuration: WorkerConfiguration, handlers: JobHandlers, pool: PostgresPool, listenURL: String,
                observer: (any WorkerObserver)? = nil) {
        self.configuration = configuration
        self.observer = observer
        self.handlers = handlers
        self.pool = pool
        reads = PostgresReadBatcher(pool: pool)
        self.queue = JobQueue(pool: pool)
        self.listenURL = listenURL
        self.logger = Logger(component: "worker").with(["worker": .string(configuration.workerID)])
    }

    /// Begins a graceful shutdown; `run()` returns once it is complete.
    public func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }
    private var inFlightCount: Int { state.withLock { $0.inFlight.count } }

    /// Runs until `stop()`.
    public func run() async {
        logger.info("worker started", [
            "concurrency": .int(configuration.concurrency), "kinds": .string(handlers.kinds.joined(separator: ",")),
        ])
        let completer = Completer(pool: pool, owner: configuration.workerID, policy: configuration.retryPolicy,
                                  lanes: configuration.completionFlushers)
        let background = startBackgroundTasks()
        await withDiscardingTaskGroup { group in
            for lane in completer.lanes {
                group.addTask { await lane.runFlusher() }
            }
            await withDiscardingTaskGroup { jobs in
                await fetchLoop(jobs: &jobs, completer: completer)
                await drain(jobs: &jobs)
            }
            for lane in completer.lanes { await lane.close() }
        }
        // Joined, not just cancelled: once `run` returns, nothing of the worker still uses the pool.
        background.forEach { $0.cancel() }
        for task in background { await task.value }
        logger.info("worker stopped")
    }

    private func startBackgroundTasks() -> [Task<Void, Never>] {
        let listener = Task { [wake, listenURL] in
            for await _ in PostgresListener.events(url: listenURL, channel: "storesync_jobs") { wake.signal() }
        }
        let heartbeat = Task { await heartbeatLoop() }
        let scheduler = Task { await scheduleLoop() }
        return [listener, heartbeat, scheduler]
    }

    private func fetchLoop(jobs: inout DiscardingTaskGroup, completer: Completer) async {
        let slots = max(1, configuration.concurrency)
        let refillThreshold = max(1, slots / 4)
        var backlog = false
        var failures = ReconnectBackoff(base: .milliseconds(200), cap: .seconds(1))
        var connection: PostgresConnection?
        while !isStopping {
            let free = slots - inFlightCount
            // With a backlog, wait until a good share of slots is free so leases go out in batches.
            if free > 0 && (!backlog || free >= refillThreshold || free == slots) {
                do {
                    if connection == nil { connection = try await openOwnConnection(for: "lease") }
                    let leased = try await JobQueue.lease(owner: configuration.workerID, limit: free,
                                                          duration: configuration.leaseDuration, on: connection!)
                    failures.recordSuccess()
                    backlog = leased.count == free
                    let leasedAt = ContinuousClock.now
                    if let observer {
                        for (kind, jobs) in Dictionary(grouping: leased, by: \.kind) {
                            observer.jobsLeased(kind: kind, count: jobs.count)
                        }
                    }
                    for job in leased {
                        state.withLock { _ = $0.inFlight.insert(job.lease) }
                        jobs.addTask { await self.process(job, leasedAt: leasedAt, completer: completer) }
                    }
                    if backlog { continue }
                } catch {
                    if let broken = await connection?.isBroken, broken { connection = nil }
                    let delay = failures.recordFailure()
                    logger.warning("leasing jobs failed", ["error": .string("\(error)")])
                    try? await Task.sleep(for: delay)
                    continue
                }
            }
            await wake.wait(timeout: configuration.pollInterval)
        }
    }

    /// A connection of the fetch loop's or the heartbeat's own (`purpose` names it in `pg_stat_activity`),
    /// outside the pool so leasing and renewing leases never wait behind completions or handlers. It commits
    /// asynchronously; `JobQueue.lease` and `JobQueue.heartbeat` say why that is safe.
    private func openOwnConnection(for purpose: String) async throws -> PostgresConnection {
        let connection = try await PostgresConnection.connect(
            url: pool.configuration.url, applicationName: "\(pool.configuration.applicationName)-\(purpose)")
        try await connection.query("SET synchronous_commit = off")
        return connection
    }

    /// Gives in-flight jobs the grace period, then cancels the rest and releases their leases.
    private func drain(jobs: inout DiscardingTaskGroup) async {
        let deadline = ContinuousClock.now + configuration.gracePeriod
        while inFlightCount > 0 && ContinuousClock.now < deadline {
            await wake.wait(timeout: min(.milliseconds(100), deadline - .now))
        }
        let unfinished = state.withLock { Array($0.inFlight) }
        guard !unfinished.isEmpty else { return }
        jobs.cancelAll()
        // Given up: a cancelled job returns without finishing, and no heartbeat may renew its lease.
        state.withLock { $0.inFlight.subtract(unfinished) }
        do {
            let released = try await queue.release(owner: configuration.workerID, leases: unfinished)
            logger.info("released unfinished jobs", ["jobs": .int(released)])
        } catch {
            logger.error("could not release unfinished jobs; they run again when their leases expire",
                         ["jobs": .int(unfinished.count), "error": .string("\(error)")])
        }
    }

    private func process(_ job: LeasedJob, leasedAt: ContinuousClock.Instant, completer: Completer) async {
        let jobLogger = logger.with([
            "job_id": .int(Int(job.id)), "kind": .string(job.kind), "attempt": .int(job.attempt),
        ])
        let finish: Finish
        if let handler = handlers[job.kind] {
            if job.attempt > job.maxAttempts {
                finish = Finish(job: job, result: .deadLetter(reason:
                    "gave up after \(job.maxAttempts) attempts; the last lease expired before a worker finished"))
            } else {
                do {
                    let result = try await handler.run(job, context: JobContext(logger: jobLogger, pool: pool, reads: reads,
                                                                                 workerID: configuration.workerID))
                    finish = Finish(job: job, result: .completed(outcome: result.outcome), writes: result.writes,
                                    serialKey: result.serialKey, readAhead: result.readAhead)
                } catch {
                    if Task.isCancelled { return }  // shutdown: the lease is released, not failed
                    finish = Finish(job: job, result: .after(error, attempt: job.attempt, maxAttempts: job.maxAttempts,
                                                             policy: configuration.retryPolicy))
                }
            }
        } else {
            finish = Finish(job: job, result: .deadLetter(reason: "no handler for kind \(job.kind)"))
        }
        let report = await completer.submit(finish)
        state.withLock { _ = $0.inFlight.remove(job.lease) }
        wake.signal()
        let elapsed = ContinuousClock.now - leasedAt
        observer?.jobFinished(kind: job.kind, report: report, sinceLease: elapsed)
        log(report, for: jobLogger, duration: elapsed)
    }

    private func log(_ report: FinishReport?, for logger: Logger, duration: Duration) {
        let millis = LogValue.int(Int(duration.milliseconds))
        switch report {
        case .completed(let outcome)?:
            logger.debug("job completed", ["outcome": .string(outcome), "duration_ms": millis])
        case .retried(let delay)?:
            logger.warning("job failed; will retry", ["outcome": "retry", "duration_ms": millis,
                                                      "retry_in_ms": .int(Int(delay.milliseconds))])
        case .deadLettered(let reason)?:
            logger.error("job dead-lettered", ["outcome": "dead_letter", "reason": .string(reason), "duration_ms": millis])
        case .writesFailed(let error, let then)?:
            logger.warning("job writes failed", ["error": .string(error), "then": .string("\(then)"), "duration_ms": millis])
        case .leaseLost?:
            logger.warning("lease lost before the outcome was recorded; nothing was written",
                           ["outcome": "lease_lost", "duration_ms": millis])
        case nil:
            logger.warning("outcome not recorded; the job runs again after its lease expires",
                           ["outcome": "unrecorded", "duration_ms": millis])
        }
    }

    /// Renews running jobs' leases every third of a lease on its own connection (see `JobQueue.heartbeat`).
    /// A failed renewal is tried again after a short backoff, never more than an interval, instead of at the
    /// next interval: two failures in a row must not use up a lease.
    private func heartbeatLoop() async {
        let interval = configuration.leaseDuration / 3
        var failures = ReconnectBackoff(base: .milliseconds(100), cap: min(.seconds(2), interval))
        var connection: PostgresConnection?
        var wait = interval
        while true {
            do { try await Task.sleep(for: wait) } catch { break }
            wait = interval
            let leases = state.withLock { Array($0.inFlight) }
            guard !leases.isEmpty else { continue }
            do {
                if connection == nil { connection = try await openOwnConnection(for: "heartbeat") }
                let lost = try await JobQueue.heartbeat(owner: configuration.workerID, leases: leases,
                                                        duration: configuration.leaseDuration, on: connection!)
                failures.recordSuccess()
                // A job whose completion committed while the heartbeat ran is gone, not lost.
                let stillRunning = state.withLock { state in lost.filter { state.inFlight.contains($0) } }
                for lease in stillRunning {
                    logger.warning("lease lost while the job was running",
                                   ["job_id": .int(Int(lease.id)), "attempt": .int(lease.attempt)])
                }
            } catch {
                if let broken = await connection?.isBroken, broken { connection = nil }
                wait = failures.recordFailure()
                logger.warning("heartbeat failed; trying again", [
                    "error": .string("\(error)"), "retry_in_ms": .int(Int(wait.milliseconds)),
                ])
            }
        }
        await connection?.close()
    }

    private func scheduleLoop() async {
        while !Task.isCancelled && !isStopping {
            for schedule in configuration.schedules {
                do {
                    if let claimed = try await schedule.claim(worker: configuration.workerID, pool: pool) {
                        logger.info("schedule period claimed", [
                            "schedule": .string(schedule.name), "period": .string(claimed.period),
                            "job_id": claimed.jobID.map { .int(Int($0)) } ?? .string("already queued"),
                        ])
                    }
                } catch {
                    logger.warning("claiming schedule failed", ["schedule": .string(schedule.name),
                                                                "error": .string("\(error)")])
                }
            }
            try? await Task.sleep(for: .seconds(30))
        }
    }
}
