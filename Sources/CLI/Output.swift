import Foundation
import Logging

/// Renders command results as aligned text tables for people or JSON for scripts.
package enum Output {
    package static func table(_ header: [String], _ rows: [[String]]) -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                i == cells.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }

    /// A JSON value built from Swift values without Foundation's number and key-order surprises.
    package indirect enum Value {
        case string(String)
        case int(Int)
        case double(Double)
        case bool(Bool)
        case null
        case raw(String)  // already-valid JSON text, e.g. a jsonb column
        case array([Value])
        case object([(String, Value)])

        package var text: String {
            switch self {
            case .string(let s): return JSON.quoted(s)
            case .int(let i): return String(i)
            case .double(let d): return d.isFinite ? String(d) : "null"
            case .bool(let b): return b ? "true" : "false"
            case .null: return "null"
            case .raw(let json): return json
            case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
            case .object(let fields):
                return "{" + fields.map { JSON.quoted($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
            }
        }
    }

    package static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    package static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
