import Metrics
import Testing

/// Guards `Histogram`: inclusive upper bounds, cumulative `_bucket` lines ending in `+Inf`, `_sum` and `_count`.
@Suite("Histogram")
struct HistogramTests {
    /// `Histogram.defaultBuckets` as `le` values, then `+Inf`.
    static let defaultBounds = ["0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5",
                                "5", "10", "30", "+Inf"]

    @Test("custom buckets render cumulatively with le last, then _sum and _count, per series")
    func golden() {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("storesync_job_duration_seconds", help: "Job duration.",
                                           labels: ["kind", "outcome"], buckets: [0.25, 1, 4])
        for value in [0.125, 0.25, 0.5, 8] { histogram.observe(value, "verify", "completed") }
        histogram.observe(.milliseconds(1500), ["purge", "retried"])
        #expect(registry.render() == """
            # HELP storesync_job_duration_seconds Job duration.
            # TYPE storesync_job_duration_seconds histogram
            storesync_job_duration_seconds_bucket{kind="purge",outcome="retried",le="0.25"} 0
            storesync_job_duration_seconds_bucket{kind="purge",outcome="retried",le="1"} 0
            storesync_job_duration_seconds_bucket{kind="purge",outcome="retried",le="4"} 1
            storesync_job_duration_seconds_bucket{kind="purge",outcome="retried",le="+Inf"} 1
            storesync_job_duration_seconds_sum{kind="purge",outcome="retried"} 1.5
            storesync_job_duration_seconds_count{kind="purge",outcome="retried"} 1
            storesync_job_duration_seconds_bucket{kind="verify",outcome="completed",le="0.25"} 2
            storesync_job_duration_seconds_bucket{kind="verify",outcome="completed",le="1"} 3
            storesync_job_duration_seconds_bucket{kind="verify",outcome="completed",le="4"} 3
            storesync_job_duration_seconds_bucket{kind="verify",outcome="completed",le="+Inf"} 4
            storesync_job_duration_seconds_sum{kind="verify",outcome="completed"} 8.875
            storesync_job_duration_seconds_count{kind="verify",outcome="completed"} 4

            """)
    }

    @Test("an unlabelled histogram renders the default buckets at zero from registration")
    func unlabelledDefaultBuckets() {
        let registry = MetricsRegistry()
        _ = registry.histogram("storesync_ingest_seconds", help: "Ingest latency.")
        #expect(registry.render() == """
            # HELP storesync_ingest_seconds Ingest latency.
            # TYPE storesync_ingest_seconds histogram

            """ + Self.defaultBounds.map { "storesync_ingest_seconds_bucket{le=\"\($0)\"} 0\n" }.joined() + """
            storesync_ingest_seconds_sum 0
            storesync_ingest_seconds_count 0

            """)
    }

    @Test("one observation is counted by every bucket whose bound it does not exceed, and by +Inf", arguments: [
        -1, 0, 0.001, 0.0011, 0.3, 1, 29.9, 30, 30.1, 1e9, .infinity,
    ] as [Double])
    func cumulativeBuckets(value: Double) {
        let registry = MetricsRegistry()
        registry.histogram("h", help: "").observe(value)
        let rendered = samples(registry.render())
        for (bound, le) in zip(Histogram.defaultBuckets + [.infinity], Self.defaultBounds) {
            #expect(rendered["h_bucket{le=\"\(le)\"}"] == (value <= bound ? "1" : "0"), "le=\(le)")
        }
        #expect(rendered["h_count"] == "1")
        #expect(rendered["h_sum"].flatMap(Double.init) == value)
    }

    @Test("durations are observed in seconds", arguments: [
        (Duration.milliseconds(250), "0.25"), (.seconds(2), "2"), (.microseconds(1), "1e-06"),
        (.nanoseconds(1_500_000_000), "1.5"),
    ])
    func durations(duration: Duration, seconds: String) {
        let registry = MetricsRegistry()
        registry.histogram("d_seconds", help: "", labels: ["kind"]).observe(duration, "k")
        #expect(samples(registry.render())[#"d_seconds_sum{kind="k"}"#] == seconds)
    }

    @Test("NaN is ignored instead of poisoning _sum")
    func nanIgnored() {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("h", help: "", buckets: [1])
        histogram.observe(.nan)
        histogram.observe(0.5)
        #expect(samples(registry.render()) == [
            #"h_bucket{le="1"}"#: "1", #"h_bucket{le="+Inf"}"#: "1", "h_sum": "0.5", "h_count": "1",
        ])
    }

    @Test("empty buckets leave only +Inf")
    func noBuckets() {
        let registry = MetricsRegistry()
        registry.histogram("h", help: "", buckets: []).observe(3)
        #expect(samples(registry.render()) == [#"h_bucket{le="+Inf"}"#: "1", "h_sum": "3", "h_count": "1"])
    }

    @Test("unsorted, repeated or non-finite buckets and an le label trap")
    func invalidDeclarationsTrap() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("h", help: "", buckets: [1, 0.5]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("h", help: "", buckets: [1, 1]) }
        await #expect(processExitsWith: .failure) {
            _ = MetricsRegistry().histogram("h", help: "", buckets: [1, .infinity])
        }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("h", help: "", labels: ["le"]) }
    }
}
