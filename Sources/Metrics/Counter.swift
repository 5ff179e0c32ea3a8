/// A count that only goes up — requests served, jobs leased, verification failures — kept as an exact integer so
/// concurrent increments never lose precision and Prometheus can take `rate()` across restarts.
public final class Counter: Sendable {
    let table: SeriesTable<Int>

    init(table: SeriesTable<Int>) { self.table = table }

    /// Adds `amount` to the series with these label values, one per label name in registration order.
    /// `by: 0` creates the series at zero, so a label set can be made visible before its first event.
    public func increment(by amount: Int = 1, _ labelValues: String...) { increment(by: amount, labelValues) }

    /// `increment(by:_:)` for label values already collected in an array.
    public func increment(by amount: Int = 1, _ labelValues: [String]) {
        precondition(amount >= 0, "counter \(table.name) only goes up; use a gauge for a value that can fall")
        table.update(labelValues) { $0 += amount }
    }
}

extension Counter: MetricFamily {
    func render(into out: inout String) {
        let series = table.snapshot()
        guard !series.isEmpty else { return }
        Exposition.appendHeader(name: table.name, help: table.help, type: "counter", to: &out)
        for (labelValues, value) in series {
            Exposition.appendSample(table.name, labelNames: table.labelNames, labelValues: labelValues,
                                    value: String(value), to: &out)
        }
    }
}
