/// A distribution — request latency, job duration — as counts per upper bound plus sum and count, which
/// Prometheus aggregates across processes and turns into quantiles with `histogram_quantile()`.
public final class Histogram: Sendable {
    /// Seconds from 1 ms to 30 s: covers a fast database round trip up to a slow store API call or job.
    public static let defaultBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                                                  10, 30]

    let table: SeriesTable<HistogramSeries>
    let buckets: [Double]
    /// The `le` values, spelled once rather than on every scrape.
    private let bucketLabels: [String]

    init(table: SeriesTable<HistogramSeries>, buckets: [Double]) {
        self.table = table
        self.buckets = buckets
        bucketLabels = buckets.map(Exposition.format)
    }

    /// Records one observation in the series with these label values, one per label name in registration
    /// order. NaN is ignored: it would turn the series' `_sum` into NaN for the rest of the process's life.
    public func observe(_ value: Double, _ labelValues: String...) { observe(value, labelValues) }

    /// `observe(_:_:)` for label values already collected in an array.
    public func observe(_ value: Double, _ labelValues: [String]) {
        guard !value.isNaN else { return }
        // Bounds are inclusive (`le`); a value above the last bound is counted only by `+Inf`, i.e. `_count`.
        let bucket = buckets.firstIndex { value <= $0 }
        table.update(labelValues) { series in
            if let bucket { series.bucketCounts[bucket] += 1 }
            series.sum += value
            series.count += 1
        }
    }

    /// Records a duration in seconds, the unit Prometheus expects, so callers can pass a `ContinuousClock`
    /// measurement unconverted.
    public func observe(_ duration: Duration, _ labelValues: String...) { observe(duration, labelValues) }

    /// `observe(_:_:)` for a duration and label values already collected in an array.
    public func observe(_ duration: Duration, _ labelValues: [String]) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) / 1e18, labelValues)
    }
}

/// One histogram series. Counts are per bucket, not cumulative, so an observation touches one slot; rendering
/// accumulates them.
struct HistogramSeries: Sendable {
    var bucketCounts: [Int]
    var sum: Double = 0
    var count = 0
}

extension Histogram: MetricFamily {
    func render(into out: inout String) {
        let series = table.snapshot()
        guard !series.isEmpty else { return }
        let name = table.name, labelNames = table.labelNames
        Exposition.appendHeader(name: name, help: table.help, type: "histogram", to: &out)
        for (labelValues, value) in series {
            var cumulative = 0
            for (bound, count) in zip(bucketLabels, value.bucketCounts) {
                cumulative += count
                Exposition.appendSample(name + "_bucket", labelNames: labelNames, labelValues: labelValues,
                                        extra: ("le", bound), value: String(cumulative), to: &out)
            }
            Exposition.appendSample(name + "_bucket", labelNames: labelNames, labelValues: labelValues,
                                    extra: ("le", "+Inf"), value: String(value.count), to: &out)
            Exposition.appendSample(name + "_sum", labelNames: labelNames, labelValues: labelValues,
                                    value: Exposition.format(value.sum), to: &out)
            Exposition.appendSample(name + "_count", labelNames: labelNames, labelValues: labelValues,
                                    value: String(value.count), to: &out)
        }
    }
}
