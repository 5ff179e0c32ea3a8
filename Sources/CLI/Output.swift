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

    package typealias Value = JSONValue

    package static func iso(_ date: Date) -> String { JSONValue.timestamp(date) }

    package static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
