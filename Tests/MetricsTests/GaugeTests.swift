import Metrics
import Testing

/// Guards `Gauge`: set and add per label set, and `replaceAll` for sampled values whose label sets come and go.
@Suite("Gauge")
struct GaugeTests {
    @Test("set and add render as a gauge, with values spelled for Prometheus")
    func golden() {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("storesync_in_flight", help: "Work in flight.", labels: ["what"])
        gauge.set(3, "requests")
        gauge.add(-1, "requests")
        gauge.add(0.25, "fraction")
        gauge.set(.infinity, "inf")
        gauge.set(-.infinity, "minus_inf")
        gauge.set(.nan, "nan")
        gauge.set(1e20, ["big"])
        gauge.add(2, ["requests"])
        #expect(registry.render() == """
            # HELP storesync_in_flight Work in flight.
            # TYPE storesync_in_flight gauge
            storesync_in_flight{what="big"} 1e+20
            storesync_in_flight{what="fraction"} 0.25
            storesync_in_flight{what="inf"} +Inf
            storesync_in_flight{what="minus_inf"} -Inf
            storesync_in_flight{what="nan"} NaN
            storesync_in_flight{what="requests"} 4

            """)
    }

    @Test("an unlabelled gauge renders zero from registration")
    func unlabelled() {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("storesync_up", help: "1 while running.")
        #expect(samples(registry.render()) == ["storesync_up": "0"])
        gauge.set(1)
        #expect(samples(registry.render()) == ["storesync_up": "1"])
    }

    @Test("replaceAll drops label sets that vanished, adds new ones and keeps the last of duplicates")
    func replaceAllRemovesVanishedSeries() {
        let registry = MetricsRegistry()
        let depth = registry.gauge("storesync_queue_depth", help: "Jobs by kind and state.", labels: ["kind", "state"])
        depth.replaceAll([(["verify", "ready"], 5), (["verify", "leased"], 2), (["purge", "ready"], 1)])
        #expect(registry.render() == """
            # HELP storesync_queue_depth Jobs by kind and state.
            # TYPE storesync_queue_depth gauge
            storesync_queue_depth{kind="purge",state="ready"} 1
            storesync_queue_depth{kind="verify",state="leased"} 2
            storesync_queue_depth{kind="verify",state="ready"} 5

            """)
        depth.replaceAll([(["verify", "ready"], 7), (["notify", "ready"], 1), (["notify", "ready"], 3)])
        #expect(samples(registry.render()) == [
            #"storesync_queue_depth{kind="notify",state="ready"}"#: "3",
            #"storesync_queue_depth{kind="verify",state="ready"}"#: "7",
        ])
        depth.replaceAll([])
        #expect(registry.render() == "")
    }

    @Test("replaceAll with the wrong number of label values traps")
    func replaceAllArityTraps() async {
        await #expect(processExitsWith: .failure) {
            MetricsRegistry().gauge("g", help: "", labels: ["kind"]).replaceAll([(["a", "b"], 1)])
        }
    }
}
