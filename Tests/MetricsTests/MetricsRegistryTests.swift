import Metrics
import Testing

/// Guards `MetricsRegistry`: registration by name, ordering of the rendered text, and that everything it renders
/// is valid Prometheus text.
@Suite("MetricsRegistry")
struct MetricsRegistryTests {
    @Test("families render sorted by name whatever the registration order, empty families left out")
    func familiesSortedByName() {
        let registry = MetricsRegistry()
        registry.gauge("b_gauge", help: "B.").set(2)
        registry.counter("c_total", help: "C.", labels: ["x"]).increment("z")
        _ = registry.counter("unused_total", help: "Never incremented.", labels: ["x"])
        registry.histogram("a_seconds", help: "A.", buckets: [1]).observe(0.5)
        registry.counter("c_total", help: "C.", labels: ["x"]).increment("a")
        #expect(registry.render() == """
            # HELP a_seconds A.
            # TYPE a_seconds histogram
            a_seconds_bucket{le="1"} 1
            a_seconds_bucket{le="+Inf"} 1
            a_seconds_sum 0.5
            a_seconds_count 1
            # HELP b_gauge B.
            # TYPE b_gauge gauge
            b_gauge 2
            # HELP c_total C.
            # TYPE c_total counter
            c_total{x="a"} 1
            c_total{x="z"} 1

            """)
    }

    @Test("series sort by label values position by position, not by the rendered text")
    func seriesSortedByLabelValues() {
        let registry = MetricsRegistry()
        let counter = registry.counter("s_total", help: "", labels: ["a", "b"])
        for (a, b) in [("b", "1"), ("a", "2"), ("a", "10"), ("", "9"), ("a b", "0"), ("a", "")] {
            counter.increment(a, b)
        }
        #expect(registry.render() == """
            # TYPE s_total counter
            s_total{a="",b="9"} 1
            s_total{a="a",b=""} 1
            s_total{a="a",b="10"} 1
            s_total{a="a",b="2"} 1
            s_total{a="a b",b="0"} 1
            s_total{a="b",b="1"} 1

            """)
    }

    @Test("registering a compatible family again returns the one already registered, keeping its help")
    func reRegistrationReturnsExisting() {
        let registry = MetricsRegistry()
        let counter = registry.counter("jobs_total", help: "First.", labels: ["kind"])
        #expect(registry.counter("jobs_total", help: "Second.", labels: ["kind"]) === counter)
        let gauge = registry.gauge("depth", help: "Depth.")
        #expect(registry.gauge("depth", help: "Depth.") === gauge)
        let histogram = registry.histogram("latency_seconds", help: "Latency.", labels: ["route"])
        #expect(registry.histogram("latency_seconds", help: "Latency.", labels: ["route"],
                                   buckets: Histogram.defaultBuckets) === histogram)
        counter.increment("a")
        registry.counter("jobs_total", help: "Second.", labels: ["kind"]).increment("a")
        #expect(registry.render().contains("""
            # HELP jobs_total First.
            # TYPE jobs_total counter
            jobs_total{kind="a"} 2

            """))
    }

    @Test("registering an incompatible family under a taken name traps")
    func incompatibleReRegistrationTraps() async {
        await #expect(processExitsWith: .failure, "different type") {
            let registry = MetricsRegistry()
            _ = registry.counter("m", help: "")
            _ = registry.gauge("m", help: "")
        }
        await #expect(processExitsWith: .failure, "different labels") {
            let registry = MetricsRegistry()
            _ = registry.counter("m", help: "", labels: ["a"])
            _ = registry.counter("m", help: "", labels: ["b"])
        }
        await #expect(processExitsWith: .failure, "different buckets") {
            let registry = MetricsRegistry()
            _ = registry.histogram("m", help: "", buckets: [1])
            _ = registry.histogram("m", help: "", buckets: [2])
        }
        await #expect(processExitsWith: .failure, "the registry's own counter with other labels") {
            _ = MetricsRegistry().counter("storesync_metrics_series_dropped_total", help: "")
        }
    }

    @Test("invalid metric or label names and duplicate labels trap at registration")
    func invalidNamesTrap() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().counter("bad-name", help: "") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("g", help: "", labels: ["__reserved"]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("g", help: "", labels: ["a:b"]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("g", help: "", labels: ["a", "a"]) }
    }

    @Test("the content type names text format 0.0.4")
    func contentType() {
        #expect(MetricsRegistry.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }

    @Test("a fresh registry renders nothing")
    func emptyRender() {
        #expect(MetricsRegistry().render() == "")
    }

    /// The grammar of text format 0.0.4 as Prometheus' parser accepts it, minus timestamps, which this registry
    /// never writes.
    static let exposition: String = {
        let name = "[a-zA-Z_:][a-zA-Z0-9_:]*"
        let label = #"[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*""#
        let value = #"(?:NaN|[+-]Inf|-?[0-9]+(?:\.[0-9]+)?(?:e[+-][0-9]+)?)"#
        let help = #"# HELP \#(name)(?: (?:[^\\\n]|\\[\\n])*)?"#
        let type = "# TYPE \(name) (?:counter|gauge|histogram|summary|untyped)"
        let sample = #"\#(name)(?:\{\#(label)(?:,\#(label))*\})? \#(value)"#
        return "(?:\(help)|\(type)|\(sample))"
    }()

    @Test("every rendered line matches the exposition grammar, even with hostile help and label values")
    func parseBack() throws {
        let registry = MetricsRegistry(maxSeriesPerFamily: 4)
        let hostile = ["", #"\"#, #"""#, "\n", "\r\n", "}", "{a=\"b\"}", #"\n"#, "ü 🙂", " ", "a,b=c", "#"]
        let counter = registry.counter("storesync_store_api_calls_total", help: "Calls \\ by\nstore, \"endpoint\".",
                                       labels: ["store", "endpoint", "status"])
        let gauge = registry.gauge("storesync:queue_depth", help: "", labels: ["kind"])
        let histogram = registry.histogram("_latency_seconds", help: "#", labels: ["route"], buckets: [1e-9, 0.5, 1e12])
        for (index, text) in hostile.enumerated() {
            counter.increment(text, "e", String(index))
            gauge.set([-.infinity, .infinity, .nan, -0.001, 1e300][index % 5], text)
            histogram.observe(Double(index) * 0.1, text)
            histogram.observe(.seconds(index), text)
        }
        let rendered = registry.render()
        #expect(rendered.hasSuffix("\n"))
        #expect(rendered.contains("storesync_metrics_series_dropped_total{family=\"_latency_seconds\"} 16\n"))
        let grammar = try Regex(Self.exposition)
        var typed: Set<Substring> = []
        for line in rendered.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            #expect(try grammar.wholeMatch(in: line) != nil, "\(line)")
            if line.hasPrefix("# TYPE ") {
                let name = line.split(separator: " ")[2]
                #expect(typed.insert(name).inserted, "TYPE repeated for \(name)")
            } else if !line.hasPrefix("#") {
                let name = line.prefix { $0 != "{" && $0 != " " }
                #expect(typed.contains { name == $0 || name.hasPrefix($0 + "_") }, "sample before its TYPE: \(line)")
            }
        }
        #expect(typed.count == 4)
    }
}
