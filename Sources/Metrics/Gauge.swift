/// A value that goes up and down — in-flight requests, queue depth — either tracked by updates or sampled
/// periodically and replaced wholesale.
public final class Gauge: Sendable {
    let table: SeriesTable<Double>

    init(table: SeriesTable<Double>) { self.table = table }

    /// Sets the series with these label values, one per label name in registration order.
    public func set(_ value: Double, _ labelValues: String...) { set(value, labelValues) }

    /// `set(_:_:)` for label values already collected in an array.
    public func set(_ value: Double, _ labelValues: [String]) { table.update(labelValues) { $0 = value } }

    /// Adds `delta` (negative to subtract) to the series, which starts at zero.
    public func add(_ delta: Double, _ labelValues: String...) { add(delta, labelValues) }

    /// `add(_:_:)` for label values already collected in an array.
    public func add(_ delta: Double, _ labelValues: [String]) { table.update(labelValues) { $0 += delta } }

    /// Replaces every series at once, for sampled values such as queue depth by kind and state: a label set
    /// that is no longer sampled disappears from the output instead of reporting its last value forever.
    /// A label set listed twice keeps its last value.
    public func replaceAll(_ values: [([String], Double)]) { table.replaceAll(values) }
}

extension Gauge: MetricFamily {
    func render(into out: inout String) {
        let series = table.snapshot()
        guard !series.isEmpty else { return }
        Exposition.appendHeader(name: table.name, help: table.help, type: "gauge", to: &out)
        for (labelValues, value) in series {
            Exposition.appendSample(table.name, labelNames: table.labelNames, labelValues: labelValues,
                                    value: Exposition.format(value), to: &out)
        }
    }
}
