import Synchronization

/// What the registry needs from each metric type: its block of exposition text.
protocol MetricFamily: AnyObject, Sendable {
    /// Appends `# HELP`, `# TYPE` and every sample — or nothing while the family has no series, as other
    /// Prometheus clients do for a labelled family that has not been used yet.
    func render(into out: inout String)
}

/// One metric family's identity and its series keyed by label values, behind a single lock so concurrent
/// updates are exact without a lock per series. Capped, so a label fed from outside input (a route, a reason
/// string) can never grow it without bound.
final class SeriesTable<Value: Sendable>: Sendable {
    let name: String
    let help: String
    let labelNames: [String]
    private let initial: Value
    private let limit: Int
    /// Where updates refused by the cap are counted; nil only for that counter itself, so it never recurses.
    private let dropped: Counter?
    private let series: Mutex<[[String]: Value]>

    init(name: String, help: String, labelNames: [String], initial: Value, limit: Int, dropped: Counter?) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.initial = initial
        self.limit = limit
        self.dropped = dropped
        // An unlabelled family has exactly one series; it exists from the start so it is scraped as zero before
        // its first update, giving `rate()` a starting point.
        series = Mutex(labelNames.isEmpty ? [[]: initial] : [:])
    }

    /// Applies `body` to the series for `labelValues`, creating it from the initial value if there is room.
    /// A new label set beyond the cap is dropped and counted instead.
    func update(_ labelValues: [String], _ body: (inout Value) -> Void) {
        checkArity(labelValues)
        let accepted = series.withLock { series in
            if let index = series.index(forKey: labelValues) {
                body(&series.values[index])
                return true
            }
            guard series.count < limit else { return false }
            var value = initial
            body(&value)
            series[labelValues] = value
            return true
        }
        // Outside the lock: the dropped counter has a lock of its own.
        if !accepted { dropped?.increment(name) }
    }

    /// Swaps in a whole new set of series; label sets not in `entries` disappear. The table is built before
    /// taking the lock, so a scrape never sees half of it. A label set listed twice keeps its last value.
    func replaceAll(_ entries: [([String], Value)]) {
        var fresh: [[String]: Value] = [:]
        var refused = 0
        for (labelValues, value) in entries {
            checkArity(labelValues)
            if fresh.count >= limit && fresh[labelValues] == nil {
                refused += 1
            } else {
                fresh[labelValues] = value
            }
        }
        series.withLock { $0 = fresh }
        if refused > 0 { dropped?.increment(by: refused, name) }
    }

    /// The series sorted by label values, so output is stable between scrapes; copied out so rendering and
    /// sorting never hold the lock that hot paths wait on.
    func snapshot() -> [(labelValues: [String], value: Value)] {
        series.withLock { Array($0) }
            .map { (labelValues: $0.key, value: $0.value) }
            .sorted { $0.labelValues.lexicographicallyPrecedes($1.labelValues) }
    }

    private func checkArity(_ labelValues: [String]) {
        precondition(labelValues.count == labelNames.count,
                     "\(name) has labels \(labelNames) but was given \(labelValues.count) values: \(labelValues)")
    }
}
