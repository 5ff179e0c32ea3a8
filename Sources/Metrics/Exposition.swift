/// The Prometheus text exposition format 0.0.4 — names, escaping and number spelling — in one place, so every
/// metric type writes text Prometheus parses.
enum Exposition {
    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`: Prometheus rejects a whole scrape over one bad name, so names are checked at
    /// registration instead.
    static func isValidMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetterOrUnderscore(first) || first == UInt8(ascii: ":") else {
            return false
        }
        return name.utf8.allSatisfy { isLetterOrUnderscore($0) || isDigit($0) || $0 == UInt8(ascii: ":") }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*` without the `__` prefix Prometheus reserves for its own labels. Unlike metric
    /// names, label names may not contain colons.
    static func isValidLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetterOrUnderscore(first), !name.hasPrefix("__") else { return false }
        return name.utf8.allSatisfy { isLetterOrUnderscore($0) || isDigit($0) }
    }

    /// Shortest text that parses back to `value`: integers without a fraction or exponent (`3`, not `3.0`, so a
    /// bucket bound reads `le="1"` as other clients write it) and Prometheus' spellings of the non-finite values.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if let integer = Int64(exactly: value) { return String(integer) }
        return String(describing: value)
    }

    /// Writes `# HELP` (omitted when `help` is empty) and `# TYPE`, which must precede a family's samples.
    static func appendHeader(name: String, help: String, type: String, to out: inout String) {
        if !help.isEmpty {
            out += "# HELP \(name) "
            appendEscaped(help, quotes: false, to: &out)
            out += "\n"
        }
        out += "# TYPE \(name) \(type)\n"
    }

    /// Writes one sample line: `name{label="value",…} value`, with `extra` (a histogram's `le`) after the
    /// family's own labels and no braces at all when there are no labels.
    static func appendSample(_ name: String, labelNames: [String], labelValues: [String],
                             extra: (String, String)? = nil, value: String, to out: inout String) {
        out += name
        if !labelNames.isEmpty || extra != nil {
            out += "{"
            for (index, (label, labelValue)) in zip(labelNames, labelValues).enumerated() {
                if index > 0 { out += "," }
                appendLabel(label, labelValue, to: &out)
            }
            if let (label, labelValue) = extra {
                if !labelNames.isEmpty { out += "," }
                appendLabel(label, labelValue, to: &out)
            }
            out += "}"
        }
        out += " \(value)\n"
    }

    private static func appendLabel(_ name: String, _ value: String, to out: inout String) {
        out += "\(name)=\""
        appendEscaped(value, quotes: true, to: &out)
        out += "\""
    }

    /// Backslash and newline are escaped everywhere; the double quote only inside label values, the one place it
    /// would end the token. Label values are arbitrary text (routes, reasons), so nothing else is touched.
    static func appendEscaped(_ text: String, quotes: Bool, to out: inout String) {
        let special = text.utf8.contains {
            $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\n") || (quotes && $0 == UInt8(ascii: "\""))
        }
        guard special else {
            out += text
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where quotes: out += "\\\""
            default: out.unicodeScalars.append(scalar)
            }
        }
    }

    private static func isLetterOrUnderscore(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_")
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
