import Foundation
import Synchronization

/// Severity of a log line; lines below the configured level are dropped before formatting.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case debug, info, warning, error

    public init?(name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "warning", "warn": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A structured field value. Kept to JSON scalars so a log line can never embed a payload by accident.
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
}

/// Writes one JSON object per line on stderr, the format log shippers (journald, Loki, Vector) ingest
/// without parsing rules. Cheap to copy; `with(_:)` adds context such as a job id.
public struct Logger: Sendable {
    private static let minimum = Atomic<Int>(LogLevel.info.rawValue)
    private static let output = Mutex<Void>(())

    /// Sets the process-wide threshold; configured once at start-up from `STORESYNC_LOG_LEVEL`.
    public static func setLevel(_ level: LogLevel) { minimum.store(level.rawValue, ordering: .relaxed) }

    private let context: [(String, LogValue)]

    public init(component: String) { context = [("component", .string(component))] }

    private init(context: [(String, LogValue)]) { self.context = context }

    /// A logger whose lines all carry these fields.
    public func with(_ fields: KeyValuePairs<String, LogValue>) -> Logger {
        Logger(context: context + fields.map { ($0.key, $0.value) })
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level.rawValue >= Self.minimum.load(ordering: .relaxed) }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.error, message, fields) }

    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, LogValue>) {
        guard isEnabled(level) else { return }
        var line = "{\"time\":\"\(Self.timestamp())\",\"level\":\"\(level.name)\",\"message\":"
        JSON.appendString(message, to: &line)
        for (key, value) in context { Self.append(key, value, to: &line) }
        for (key, value) in fields { Self.append(key, value, to: &line) }
        line += "}\n"
        Self.output.withLock { _ in FileHandle.standardError.write(Data(line.utf8)) }
    }

    private static func append(_ key: String, _ value: LogValue, to line: inout String) {
        line += ","
        JSON.appendString(key, to: &line)
        line += ":"
        switch value {
        case .string(let s): JSON.appendString(s, to: &line)
        case .int(let i): line += String(i)
        case .double(let d): line += d.isFinite ? String(d) : "null"
        case .bool(let b): line += b ? "true" : "false"
        }
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let millis = now.tv_nsec / 1_000_000
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}
