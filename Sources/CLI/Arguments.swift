import Foundation

/// A bad command line or configuration: printed as one line, exit status 2.
public struct UsageError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A command line being consumed: options are taken by name wherever they appear, what remains are
/// positionals. `finish()` rejects anything left unrecognised, so a typo never silently does nothing. `package`, as
/// the rest of the command-line plumbing here, so that `storesync-dev`'s commands (`DevTools`) parse alike.
package struct Arguments {
    private var tokens: [String]

    package init(_ tokens: [String]) { self.tokens = tokens }

    package var isEmpty: Bool { tokens.isEmpty }

    /// Takes `--name` and reports whether it was there.
    package mutating func flag(_ name: String) -> Bool {
        guard let index = tokens.firstIndex(of: name) else { return false }
        tokens.remove(at: index)
        return true
    }

    /// Takes `--name VALUE` or `--name=VALUE`.
    package mutating func option(_ name: String) throws -> String? {
        try options(name).last
    }

    /// Takes every `--name VALUE` (for options that may repeat).
    package mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        var index = 0
        while index < tokens.count {
            if tokens[index] == name {
                guard index + 1 < tokens.count, !tokens[index + 1].hasPrefix("--") else {
                    throw UsageError("\(name) needs a value")
                }
                values.append(tokens[index + 1])
                tokens.removeSubrange(index...(index + 1))
            } else if tokens[index].hasPrefix(name + "=") {
                values.append(String(tokens[index].dropFirst(name.count + 1)))
                tokens.remove(at: index)
            } else {
                index += 1
            }
        }
        return values
    }

    /// Takes the first token when it is `word`: a subcommand of a command that also runs without one.
    package mutating func subcommand(_ word: String) -> Bool {
        guard tokens.first == word else { return false }
        tokens.removeFirst()
        return true
    }

    /// Takes the next positional argument.
    package mutating func positional() -> String? {
        guard let index = tokens.firstIndex(where: { !$0.hasPrefix("--") || $0 == "-" }) else { return nil }
        return tokens.remove(at: index)
    }

    /// Takes every remaining positional argument.
    package mutating func remainingPositionals() -> [String] {
        var values: [String] = []
        while let value = positional() { values.append(value) }
        return values
    }

    /// Fails on anything not consumed.
    package func finish() throws {
        if let extra = tokens.first {
            let shown = Parse.redacted(extra) ?? (extra.count > 64 ? String(extra.prefix(64)) + "…" : extra)
            throw UsageError(extra.hasPrefix("--") ? "unknown option \(shown)" : "unexpected argument \(shown)")
        }
    }
}

/// Parsers shared by flags and environment variables, each naming the setting in its error.
package enum Parse {
    package static func int(_ text: String, _ name: String, range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), got \(text.debugDescription)")
        }
        return value
    }

    /// A share such as `0.25` or `1`: more than 0, at most 1000 (a benchmark may lift limits far above the
    /// stores' published ones).
    package static func fraction(_ text: String, _ name: String) throws -> Double {
        guard text.utf8.count <= 20, let value = Double(text), value.isFinite, value > 0, value <= 1000 else {
            throw UsageError("\(name) must be a number greater than 0 and at most 1000, not \(text.prefix(20).debugDescription)")
        }
        return value
    }

    /// `250ms`, `30s`, `5m`, `2h`, `60d`, or a bare number of seconds.
    package static func duration(_ text: String, _ name: String, range: ClosedRange<Duration>) throws -> Duration {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        var number = text
        var scale = 1.0
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = String(text.dropLast(suffix.count))
            scale = factor
            break
        }
        guard let value = Double(number), value.isFinite, value >= 0 else {
            throw UsageError("\(name) must be a duration like 500ms, 30s, 5m or 2h, got \(text.debugDescription)")
        }
        // Checked as a number first: a value past Int64's range (1e300, say) would trap in the conversion.
        let milliseconds = (value * scale * 1000).rounded()
        guard milliseconds >= Double(range.lowerBound.milliseconds), milliseconds <= Double(range.upperBound.milliseconds) else {
            throw UsageError("\(name) must be between \(range.lowerBound) and \(range.upperBound), got \(Parse.quoted(text))")
        }
        return .milliseconds(Int64(milliseconds))
    }

    /// An ISO 8601 timestamp such as `2026-11-29T14:00:00Z`.
    package static func date(_ text: String, _ name: String) throws -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: text) else {
            throw UsageError("\(name) must be an ISO 8601 time like 2026-11-29T14:00:00Z, got \(text.debugDescription)")
        }
        return date
    }

    package static func jobID(_ text: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else { throw UsageError("not a job id: \(text.debugDescription)") }
        return id
    }
}
