import API
import Foundation
import GooglePlay
import HTTP
import Ingest
import Metrics
import Operations
import Postgres
import Sync
import Testing
import Worker

/// The Grafana dashboard and the Prometheus alert rules in `deploy/` name metrics in PromQL, which nothing
/// else checks: a renamed metric would leave a panel empty and an alert silent, without any error. So every
/// name they query is held to what `serve` and `work` really register, and each alert to what on-call needs.
struct DeployedMonitoringTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyMetricQueriedIsOneServeOrWorkExports() async throws {
        let exported = try await Self.exportedSampleNames()
        let queries = try Self.dashboardPanels().flatMap(\.queries) + Self.alertRules().map(\.expr)
        #expect(queries.count > 20)
        for query in queries {
            let names = PromQLNames.metrics(in: query)
            #expect(!names.isEmpty, "no metric in \(query)")
            for name in names {
                #expect(exported.contains(name),
                        "\(name) is neither a metric serve or work exports nor a PromQL word this test knows: \(query)")
            }
        }
    }

    @Test func everyPanelHasATitleAndAQueryOnTheDatasourceVariable() throws {
        let dashboard = try Self.dashboard()
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        #expect(variables.contains { $0["name"] as? String == "datasource" && $0["query"] as? String == "prometheus" })
        let panels = try Self.dashboardPanels()
        #expect(panels.count > 10)
        for panel in panels {
            #expect(!panel.title.isEmpty)
            #expect(!panel.queries.isEmpty && !panel.queries.contains(""), "\(panel.title) queries nothing")
            #expect(panel.datasources.allSatisfy { $0 == "${datasource}" }, "\(panel.title): another datasource")
        }
    }

    @Test func everyAlertWaitsHasASeverityAndTellsOnCallWhatToDo() throws {
        let rules = try Self.alertRules()
        let text = try String(contentsOf: Self.repository.appending(path: Self.alertsPath), encoding: .utf8)
        let exprs = text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("expr:") }
        #expect(rules.count == exprs.count, "an expr outside an alert")
        #expect(rules.count >= 6)
        for rule in rules {
            #expect(rule.duration?.wholeMatch(of: /[0-9]+[smh]/) != nil, "\(rule.name) has no for")
            #expect(["warning", "critical"].contains(rule.severity), "\(rule.name) has no severity")
            #expect(rule.summary?.isEmpty == false, "\(rule.name) has no summary")
            #expect(rule.description?.contains("storesync ") == true, "\(rule.name) names no command to run")
        }
    }

    /// The names `storesync serve` and `storesync work` register, from their metric owners built on one
    /// registry as `ServeCommand` and `WorkCommand` build them. Nothing connects: pools open on first use.
    static func exportedSampleNames() async throws -> Set<String> {
        let registry = MetricsRegistry()
        let http = try HTTPClient()
        let pool = PostgresPool(PostgresConfiguration(url: "postgresql:///never-connected"))
        _ = IngestService(pool: pool, metrics: registry, keyCaches: GoogleKeyCaches(http: http))
        _ = MobileStoresAPI(pool: pool, registrar: PurchaseRegistrar(http: http), metrics: registry)
        var handlers = JobHandlers()
        SyncHandlers.register(into: &handlers, http: http, metrics: registry)
        _ = WorkerMetrics(registry: registry)
        await http.shutdown()
        return registry.sampleNames
    }

    static let dashboardPath = "deploy/grafana/storesync-dashboard.json"
    static let alertsPath = "deploy/prometheus/storesync-alerts.yml"

    static func dashboard() throws -> [String: Any] {
        let data = try Data(contentsOf: repository.appending(path: dashboardPath))
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    struct Panel {
        let title: String
        let queries: [String]
        let datasources: [String?]
    }

    /// Every panel that shows data, rows' nested panels included; rows themselves only group.
    static func dashboardPanels() throws -> [Panel] {
        func panels(_ list: Any?) -> [[String: Any]] {
            (list as? [[String: Any]] ?? []).flatMap { $0["type"] as? String == "row" ? panels($0["panels"]) : [$0] }
        }
        return try panels(dashboard()["panels"]).map { panel in
            let targets = panel["targets"] as? [[String: Any]] ?? []
            let datasources = [panel["datasource"]] + targets.map { $0["datasource"] }
            return Panel(title: panel["title"] as? String ?? "", queries: targets.map { $0["expr"] as? String ?? "" },
                         datasources: datasources.map { ($0 as? [String: Any])?["uid"] as? String })
        }
    }

    struct AlertRule {
        let name: String
        var expr = ""
        var duration: String?
        var severity: String?
        var summary: String?
        var description: String?
    }

    /// The rule file is read, not parsed as YAML in general: it keeps to `key: value` lines, an `expr: |` block
    /// (the lines indented deeper) and a folded `description: >-` block, which is all this needs.
    static func alertRules() throws -> [AlertRule] {
        let text = try String(contentsOf: repository.appending(path: alertsPath), encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        var rules: [AlertRule] = []
        while let line = lines.popFirst() {
            let indent = line.prefix { $0 == " " }.count
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[line.index(line.startIndex, offsetBy: indent)..<colon]
            var value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if value == "|" || value == ">-" {
                var block: [String] = []
                // The lines indented deeper than the key, and blank lines among them.
                while let next = lines.first,
                      next.prefix(while: { $0 == " " }).count > indent || next.allSatisfy({ $0 == " " }) {
                    block.append(lines.removeFirst().trimmingCharacters(in: .whitespaces))
                }
                value = block.joined(separator: value == "|" ? "\n" : " ")
            }
            if key == "- alert" {
                rules.append(AlertRule(name: value))
                continue
            }
            guard !rules.isEmpty else { continue }
            switch key {
            case "expr": rules[rules.count - 1].expr = value
            case "for": rules[rules.count - 1].duration = value
            case "severity": rules[rules.count - 1].severity = value
            case "summary": rules[rules.count - 1].summary = value
            case "description": rules[rules.count - 1].description = value
            default: break
            }
        }
        return rules
    }
}

/// The metric names in a PromQL expression: every identifier outside strings, label matchers `{…}`, ranges
/// `[…]` (where Grafana's `$__rate_interval` goes) and label lists (`by (…)`, `on (…)`, …) that is not a
/// PromQL function, aggregation or keyword. A word this does not know counts as a metric name, so a misspelt
/// function fails the test as surely as a renamed metric.
enum PromQLNames {
    static let words: Set<String> = [
        "sum", "min", "max", "avg", "count", "topk", "bottomk", "quantile", "rate", "irate", "increase", "delta",
        "idelta", "deriv", "histogram_quantile", "label_replace", "absent", "clamp_min", "clamp_max", "vector",
        "and", "or", "unless", "bool", "offset", "inf", "nan",
    ]
    /// Followed by a parenthesised list of label names, not of expressions.
    static let labelLists: Set<String> = ["by", "without", "on", "ignoring", "group_left", "group_right"]

    static func metrics(in query: String) -> Set<String> {
        let scalars = Array(query.unicodeScalars)
        var names: Set<String> = []
        var index = 0
        /// Moves past everything up to and including `close`, skipping quoted strings on the way.
        func skip(to close: Unicode.Scalar) {
            while index < scalars.count, scalars[index] != close {
                if scalars[index] == "\"" || scalars[index] == "'" { skipString() } else { index += 1 }
            }
            index += 1
        }
        func skipString() {
            let quote = scalars[index]
            index += 1
            while index < scalars.count, scalars[index] != quote { index += scalars[index] == "\\" ? 2 : 1 }
            index += 1
        }
        func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
            ("0"..."9").contains(scalar) || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                || scalar == "_" || scalar == ":"
        }
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\"", "'", "`": skipString()
            case "{": skip(to: "}")
            case "[": skip(to: "]")
            case "0"..."9", ".", "$":
                // Numbers (`0.99`, `1e3`), durations (`offset 15m`) and Grafana variables are not names.
                index += 1
                while index < scalars.count, isWordScalar(scalars[index]) || scalars[index] == "." { index += 1 }
            case "a"..."z", "A"..."Z", "_", ":":
                let start = index
                while index < scalars.count, isWordScalar(scalars[index]) { index += 1 }
                let word = String(String.UnicodeScalarView(scalars[start..<index]))
                if labelLists.contains(word) {
                    while index < scalars.count, scalars[index] == " " { index += 1 }
                    if index < scalars.count, scalars[index] == "(" { skip(to: ")") }
                } else if !words.contains(word) {
                    names.insert(word)
                }
            default: index += 1
            }
        }
        return names
    }
}
