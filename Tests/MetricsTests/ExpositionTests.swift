@testable import Metrics
import Testing

/// Guards the spelling rules every metric type relies on: numbers Prometheus parses, escaping that keeps one
/// sample on one line, and the names Prometheus accepts.
@Suite("Exposition")
struct ExpositionTests {
    @Test("numbers are spelled so Prometheus parses them: integers without fraction or exponent", arguments: [
        (0, "0"), (-0.0, "0"), (3, "3"), (-2, "-2"), (30, "30"), (1e18, "1000000000000000000"), (0.5, "0.5"),
        (0.001, "0.001"), (0.0025, "0.0025"), (-2.5, "-2.5"), (0.1 + 0.2, "0.30000000000000004"), (1e-05, "1e-05"),
        (1e20, "1e+20"), (.infinity, "+Inf"), (-.infinity, "-Inf"), (.nan, "NaN"),
    ] as [(Double, String)])
    func numbers(value: Double, text: String) {
        #expect(Exposition.format(value) == text)
        if value.isFinite { #expect(Double(text) == value) }
    }

    @Test("label values escape backslash, double quote and newline and nothing else", arguments: [
        ("plain", "plain"), ("", ""), (#"a\b"#, #"a\\b"#), (#"say "hi""#, #"say \"hi\""#),
        ("two\nlines", #"two\nlines"#),
        (#"\n"#, #"\\n"#), ("tab\tand\rcr", "tab\tand\rcr"), ("/v1/ü/🙂", "/v1/ü/🙂"), (#"\""#, #"\\\""#),
    ])
    func labelValueEscaping(raw: String, escaped: String) {
        var out = ""
        Exposition.appendEscaped(raw, quotes: true, to: &out)
        #expect(out == escaped)
    }

    @Test("help text escapes backslash and newline but keeps double quotes", arguments: [
        ("Requests served.", "Requests served."), (#"a "quoted" \ word"#, #"a "quoted" \\ word"#),
        ("first\nsecond", #"first\nsecond"#),
    ])
    func helpEscaping(raw: String, escaped: String) {
        var out = ""
        Exposition.appendEscaped(raw, quotes: false, to: &out)
        #expect(out == escaped)
    }

    @Test("metric names follow [a-zA-Z_:][a-zA-Z0-9_:]*", arguments: [
        ("storesync_http_requests_total", true), ("a", true), ("_", true), (":", true), ("job:rate5m", true),
        ("A9_z:", true), ("__internal", true), ("", false), ("9lives", false), ("has-dash", false),
        ("has space", false), ("dotted.name", false), ("émoji", false), ("tab\t", false),
    ])
    func metricNames(name: String, valid: Bool) {
        #expect(Exposition.isValidMetricName(name) == valid)
    }

    @Test("label names follow [a-zA-Z_][a-zA-Z0-9_]* and may not start with __", arguments: [
        ("route", true), ("status_code", true), ("_private", true), ("le", true), ("Z9", true), ("", false),
        ("__name__", false), ("__x", false), ("with:colon", false), ("9th", false), ("has-dash", false),
        ("ü", false),
    ])
    func labelNames(name: String, valid: Bool) {
        #expect(Exposition.isValidLabelName(name) == valid)
    }
}
