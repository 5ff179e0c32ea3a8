import Synchronization

/// Every metric family a process exports, rendered on demand as Prometheus text for `/metrics`. One registry
/// per process, shared by the HTTP server and the worker, so both report through the same endpoint.
///
/// Families are registered by name; asking again for a name with the same type and labels returns the family
/// already registered (keeping the first help text), so independent components can each declare what they use.
/// Asking for it with a different type, labels or buckets — or with an invalid name — is a programmer error and
/// traps, since the output would otherwise be rejected by Prometheus or silently merge two meanings.
public final class MetricsRegistry: Sendable {
    /// The `Content-Type` for `render()`'s output, which tells Prometheus which parser to use.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Counts updates refused by the series cap, labelled by the family that refused them, so a
    /// cardinality explosion is visible instead of silently incomplete.
    static let droppedSeriesName = "storesync_metrics_series_dropped_total"

    private let maxSeriesPerFamily: Int
    private let droppedSeries: Counter
    private let families: Mutex<[String: any MetricFamily]>

    /// `maxSeriesPerFamily` bounds each family's memory: once reached, updates for new label sets are dropped
    /// and counted in `storesync_metrics_series_dropped_total{family=…}` while existing series keep updating.
    public init(maxSeriesPerFamily: Int = 10_000) {
        precondition(maxSeriesPerFamily > 0, "maxSeriesPerFamily must be positive")
        self.maxSeriesPerFamily = maxSeriesPerFamily
        droppedSeries = Counter(table: SeriesTable(
            name: Self.droppedSeriesName,
            help: "Metric updates discarded because their family already held the maximum number of series.",
            labelNames: ["family"], initial: 0, limit: maxSeriesPerFamily, dropped: nil))
        families = Mutex([Self.droppedSeriesName: droppedSeries])
    }

    /// Registers a counter family, or returns the one already registered under `name` with the same labels.
    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        register(name, labels: labels, reserved: [], type: "counter") {
            Counter(table: table(name, help, labels, initial: 0))
        } isCompatible: { $0.table.labelNames == labels }
    }

    /// Registers a gauge family, or returns the one already registered under `name` with the same labels.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        register(name, labels: labels, reserved: [], type: "gauge") {
            Gauge(table: table(name, help, labels, initial: 0))
        } isCompatible: { $0.table.labelNames == labels }
    }

    /// Registers a histogram family, or returns the one already registered under `name` with the same labels
    /// and buckets. `buckets` are finite, strictly increasing upper bounds; `+Inf` is always added.
    public func histogram(_ name: String, help: String, labels: [String] = [],
                          buckets: [Double] = Histogram.defaultBuckets) -> Histogram {
        precondition(buckets.allSatisfy(\.isFinite) && zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 },
                     "histogram \(name) needs finite, strictly increasing buckets; got \(buckets)")
        return register(name, labels: labels, reserved: ["le"], type: "histogram") {
            let empty = HistogramSeries(bucketCounts: Array(repeating: 0, count: buckets.count))
            return Histogram(table: table(name, help, labels, initial: empty), buckets: buckets)
        } isCompatible: { $0.table.labelNames == labels && $0.buckets == buckets }
    }

    /// Prometheus text exposition format 0.0.4: families sorted by name and series by label values, so
    /// consecutive scrapes diff cleanly. Families without any series are left out.
    public func render() -> String {
        let families = families.withLock { $0 }.sorted { $0.key < $1.key }
        var out = ""
        for (_, family) in families { family.render(into: &out) }
        return out
    }

    /// Every name a scrape can carry samples under — a histogram's `_bucket`, `_sum` and `_count`, any other
    /// family's own name — for every registered family, with series or not (`render()` leaves those out): what
    /// dashboards and alert rules may query, so a test can hold them to what the code registers.
    public var sampleNames: Set<String> {
        families.withLock { families in
            Set(families.flatMap { name, family in
                family is Histogram ? ["_bucket", "_sum", "_count"].map { name + $0 } : [name]
            })
        }
    }

    private func table<Value>(_ name: String, _ help: String, _ labels: [String], initial: Value)
        -> SeriesTable<Value> {
        SeriesTable(name: name, help: help, labelNames: labels, initial: initial, limit: maxSeriesPerFamily,
                    dropped: droppedSeries)
    }

    private func register<Family: MetricFamily>(_ name: String, labels: [String], reserved: Set<String>, type: String,
                                                make: () -> Family, isCompatible: (Family) -> Bool) -> Family {
        precondition(Exposition.isValidMetricName(name), "invalid metric name \"\(name)\"")
        for label in labels {
            precondition(Exposition.isValidLabelName(label) && !reserved.contains(label),
                         "invalid label name \"\(label)\" for \(name)")
        }
        precondition(Set(labels).count == labels.count, "duplicate label names \(labels) for \(name)")
        return families.withLock { families in
            guard let existing = families[name] else {
                let family = make()
                families[name] = family
                return family
            }
            guard let same = existing as? Family, isCompatible(same) else {
                preconditionFailure("\(name) is already registered with a different type, labels or buckets than "
                                    + "this \(type) with labels \(labels)")
            }
            return same
        }
    }
}
