/// A DevTools event that counts as a console error, as one line a test failure can show: `console.error` and
/// failed `console.assert` calls, uncaught exceptions (also in promises), and errors the browser logs itself —
/// a resource that failed to load (a 404 favicon, a stylesheet), a script a Content-Security-Policy blocked.
struct ConsoleError {
    let text: String

    /// nil for any other event, and for log entries below the error level.
    init?(_ method: String, _ params: JSONValue) {
        switch method {
        case "Runtime.consoleAPICalled":
            guard let type = params["type"]?.string, type == "error" || type == "assert" else { return nil }
            let arguments = params["args"]?.array ?? []
            text = "console.\(type): \(arguments.map(Self.describe).joined(separator: " "))"
                + Self.location(params["stackTrace"]?["callFrames"]?[0])
        case "Runtime.exceptionThrown":
            let details = params["exceptionDetails"]
            // The exception's description starts with its class and message, then the stack; the first line says it.
            let described = details?["exception"]?["description"]?.string?.split(separator: "\n").first.map(String.init)
            text = "uncaught \(described ?? details?["text"]?.string ?? "exception")" + Self.location(details)
        case "Log.entryAdded":
            guard let entry = params["entry"], entry["level"]?.string == "error" else { return nil }
            let url = entry["url"]?.string.map { " (\($0))" } ?? ""
            text = "\(entry["source"]?.string ?? "browser"): \(entry["text"]?.string ?? "")\(url)"
        default:
            return nil
        }
    }

    /// A console argument as the console shows it: strings bare, other values as JSON or by their description.
    private static func describe(_ argument: JSONValue) -> String {
        if let string = argument["value"]?.string { return string }
        if let value = argument["value"], let literal = try? value.literal() { return literal }
        return argument["description"]?.string ?? argument["unserializableValue"]?.string
            ?? argument["type"]?.string ?? "?"
    }

    /// " at url:line:column" for a call frame or exception details (0-based in the protocol, 1-based here).
    private static func location(_ frame: JSONValue?) -> String {
        guard let frame, let url = frame["url"]?.string, !url.isEmpty else { return "" }
        let line = (frame["lineNumber"]?.int ?? 0) + 1, column = (frame["columnNumber"]?.int ?? 0) + 1
        return " at \(url):\(line):\(column)"
    }
}
