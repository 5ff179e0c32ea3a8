import Foundation

/// A fragment of HTML that is safe to send: text interpolated into it is escaped unless it is `HTML` itself, so a
/// dead letter's reason, a payload or a search term can never become markup on on-call's screen.
struct HTML: ExpressibleByStringInterpolation, Sendable, Equatable {
    private(set) var markup: String

    init(stringLiteral markup: String) {
        self.markup = markup
    }

    init(stringInterpolation: Interpolation) {
        markup = stringInterpolation.markup
    }

    /// The fragments one after another.
    init(_ parts: [HTML]) {
        markup = parts.map(\.markup).joined()
    }

    static let empty: HTML = ""

    struct Interpolation: StringInterpolationProtocol {
        var markup = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        mutating func appendLiteral(_ literal: String) {
            markup += literal
        }

        mutating func appendInterpolation(_ html: HTML) {
            markup += html.markup
        }

        mutating func appendInterpolation(_ parts: [HTML]) {
            for part in parts { markup += part.markup }
        }

        mutating func appendInterpolation(_ text: String) {
            markup += HTML.escape(text)
        }

        mutating func appendInterpolation(_ text: String?) {
            markup += HTML.escape(text ?? "")
        }

        mutating func appendInterpolation<Number: BinaryInteger>(_ number: Number) {
            markup += String(number)
        }
    }

    /// `text` with the five characters that mean something in HTML text and attribute values escaped.
    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { [0x26, 0x3C, 0x3E, 0x22, 0x27].contains($0) }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
