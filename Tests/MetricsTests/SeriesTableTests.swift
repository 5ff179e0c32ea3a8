import Metrics
import Testing

/// Guards the table behind every metric type: exact totals under concurrent updates, and the cap that keeps a
/// label fed from outside input from exhausting memory.
@Suite("SeriesTable")
struct SeriesTableTests {
    @Test("8 tasks × 10 000 updates each lose nothing")
    func concurrentUpdatesAreExact() async {
        let registry = MetricsRegistry()
        let counter = registry.counter("hits_total", help: "", labels: ["route"])
        let total = registry.counter("all_total", help: "")
        let gauge = registry.gauge("level", help: "")
        let histogram = registry.histogram("h_seconds", help: "", labels: ["kind"], buckets: [1])
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for _ in 0..<10_000 {
                        counter.increment("/r\(task % 2)")
                        total.increment()
                        gauge.add(task.isMultiple(of: 2) ? 2 : -1)
                        histogram.observe(0.5, "k")
                    }
                    _ = registry.render()
                }
            }
        }
        let rendered = samples(registry.render())
        #expect(rendered["all_total"] == "80000")
        #expect(rendered[#"hits_total{route="/r0"}"#] == "40000")
        #expect(rendered[#"hits_total{route="/r1"}"#] == "40000")
        #expect(rendered["level"] == "40000")
        #expect(rendered[#"h_seconds_bucket{kind="k",le="1"}"#] == "80000")
        #expect(rendered[#"h_seconds_count{kind="k"}"#] == "80000")
        #expect(rendered[#"h_seconds_sum{kind="k"}"#] == "40000")
    }

    @Test("beyond the cap new label sets are dropped and counted, while existing series keep updating")
    func capDropsAndCounts() {
        let registry = MetricsRegistry(maxSeriesPerFamily: 3)
        let counter = registry.counter("requests_total", help: "", labels: ["route"])
        let histogram = registry.histogram("latency_seconds", help: "", labels: ["route"], buckets: [1])
        for route in ["/a", "/b", "/c", "/d", "/e", "/d"] {
            counter.increment(route)
            histogram.observe(0.5, route)
        }
        counter.increment(by: 5, "/a")
        let rendered = samples(registry.render())
        #expect(rendered.keys.filter { $0.hasPrefix("requests_total") }.sorted() == [
            #"requests_total{route="/a"}"#, #"requests_total{route="/b"}"#, #"requests_total{route="/c"}"#,
        ])
        #expect(rendered[#"requests_total{route="/a"}"#] == "6")
        #expect(rendered[#"latency_seconds_count{route="/c"}"#] == "1")
        #expect(rendered[#"latency_seconds_count{route="/d"}"#] == nil)
        #expect(rendered[#"storesync_metrics_series_dropped_total{family="requests_total"}"#] == "3")
        #expect(rendered[#"storesync_metrics_series_dropped_total{family="latency_seconds"}"#] == "3")
        #expect(registry.render().contains("""
            # HELP storesync_metrics_series_dropped_total Metric updates discarded because their family already held \
            the maximum number of series.
            # TYPE storesync_metrics_series_dropped_total counter

            """))
    }

    @Test("the default cap is 10 000 series per family")
    func defaultCap() {
        let registry = MetricsRegistry()
        let counter = registry.counter("ids_total", help: "", labels: ["id"])
        for id in 0...10_000 { counter.increment(String(id)) }
        let rendered = samples(registry.render())
        #expect(rendered.keys.filter { $0.hasPrefix("ids_total{") }.count == 10_000)
        #expect(rendered[#"ids_total{id="10000"}"#] == nil)
        #expect(rendered[#"storesync_metrics_series_dropped_total{family="ids_total"}"#] == "1")
    }

    @Test("replaceAll keeps the first label sets up to the cap and counts the rest, duplicates not counted")
    func replaceAllCapped() {
        let registry = MetricsRegistry(maxSeriesPerFamily: 2)
        let depth = registry.gauge("depth", help: "", labels: ["kind"])
        depth.replaceAll([(["a"], 1), (["b"], 2), (["a"], 3), (["c"], 4), (["d"], 5)])
        let rendered = samples(registry.render())
        #expect(rendered.filter { $0.key.hasPrefix("depth") } == [#"depth{kind="a"}"#: "3", #"depth{kind="b"}"#: "2"])
        #expect(rendered[#"storesync_metrics_series_dropped_total{family="depth"}"#] == "2")
    }

    @Test("when the dropped counter is itself full it drops silently instead of recursing")
    func droppedCounterIsCappedToo() {
        let registry = MetricsRegistry(maxSeriesPerFamily: 1)
        let first = registry.counter("first_total", help: "", labels: ["x"])
        let second = registry.counter("second_total", help: "", labels: ["x"])
        for value in ["a", "b"] {
            first.increment(value)
            second.increment(value)
        }
        let dropped = samples(registry.render()).filter { $0.key.hasPrefix("storesync_metrics_series_dropped_total") }
        #expect(dropped == [#"storesync_metrics_series_dropped_total{family="first_total"}"#: "1"])
    }
}
