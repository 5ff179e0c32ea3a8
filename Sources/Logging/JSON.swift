/// Minimal JSON string escaping shared by the log writer and the CLI's `--json` output.
public enum JSON {
    /// Appends `value` as a quoted JSON string, escaping per RFC 8259 §7.
    public static func appendString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// `value` as a quoted JSON string.
    public static func quoted(_ value: String) -> String {
        var out = ""
        appendString(value, to: &out)
        return out
    }
}
