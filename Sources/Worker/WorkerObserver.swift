import Queue

/// Told about every job outcome as it is committed — the hook for metrics and benchmarks, kept out of
/// the worker so it needs neither.
public protocol WorkerObserver: Sendable {
    /// `count` jobs of `kind` were just leased by this process.
    func jobsLeased(kind: String, count: Int)

    /// `sinceLease` runs from the lease to the durable commit of the outcome; `report` is nil when the
    /// outcome could not be recorded.
    func jobFinished(kind: String, report: FinishReport?, sinceLease: Duration)
}

extension WorkerObserver {
    public func jobsLeased(kind: String, count: Int) {}
}
