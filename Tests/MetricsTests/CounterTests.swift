import Metrics
import Testing

/// Guards `Counter`: exact integer counts per label set, rendered as a Prometheus counter.
@Suite("Counter")
struct CounterTests {
    @Test("an unlabelled counter renders zero from registration")
    func unlabelledStartsAtZero() {
        let registry = MetricsRegistry()
        let counter = registry.counter("storesync_jobs_total", help: "Jobs seen.")
        #expect(registry.render() == """
            # HELP storesync_jobs_total Jobs seen.
            # TYPE storesync_jobs_total counter
            storesync_jobs_total 0

            """)
        counter.increment()
        counter.increment(by: 41)
        #expect(samples(registry.render())["storesync_jobs_total"] == "42")
    }

    @Test("labelled series render sorted by label values, in label-name order")
    func labelledGolden() {
        let registry = MetricsRegistry()
        let counter = registry.counter("storesync_http_requests_total", help: "HTTP requests by route and status.",
                                       labels: ["route", "status"])
        counter.increment("/v1/receipts", "500")
        counter.increment(by: 3, "/v1/receipts", "200")
        counter.increment("/metrics", "200")
        counter.increment(by: 2, ["/v1/receipts", "200"])
        #expect(registry.render() == """
            # HELP storesync_http_requests_total HTTP requests by route and status.
            # TYPE storesync_http_requests_total counter
            storesync_http_requests_total{route="/metrics",status="200"} 1
            storesync_http_requests_total{route="/v1/receipts",status="200"} 5
            storesync_http_requests_total{route="/v1/receipts",status="500"} 1

            """)
    }

    @Test("a labelled counter renders nothing until used, and by: 0 makes a series visible at zero")
    func labelledAppearsOnFirstUse() {
        let registry = MetricsRegistry()
        let counter = registry.counter("storesync_jobs_retried_total", help: "Retries.", labels: ["kind"])
        #expect(registry.render() == "")
        counter.increment(by: 0, "purge")
        #expect(samples(registry.render()) == [#"storesync_jobs_retried_total{kind="purge"}"#: "0"])
    }

    @Test("label values are escaped in the sample line and help text in the HELP line")
    func escaping() {
        let registry = MetricsRegistry()
        registry.counter("failures_total", help: "Failures by \\ reason\nsecond line.", labels: ["reason"])
            .increment(#"bad "sig" \ line"# + "\nnext")
        #expect(registry.render() == #"""
            # HELP failures_total Failures by \\ reason\nsecond line.
            # TYPE failures_total counter
            failures_total{reason="bad \"sig\" \\ line\nnext"} 1

            """#)
    }

    @Test("a negative increment traps: counters only go up")
    func negativeIncrementTraps() async {
        await #expect(processExitsWith: .failure) {
            MetricsRegistry().counter("c_total", help: "").increment(by: -1)
        }
    }

    @Test("the wrong number of label values traps")
    func wrongLabelCountTraps() async {
        await #expect(processExitsWith: .failure) {
            MetricsRegistry().counter("c_total", help: "", labels: ["a", "b"]).increment("only one")
        }
        await #expect(processExitsWith: .failure) {
            MetricsRegistry().counter("c_total", help: "").increment("unexpected")
        }
    }
}
