import Foundation
import HTTP
import StoreModel

/// The frame every page shares, and the headers every answer carries: no script but the console's own file, no
/// style but its own sheet, no framing, nothing cached (pages show live operational data), nothing sent to other
/// sites. Everything the page needs comes from this process; there is no CDN and no build step.
enum Layout {
    enum Section: String {
        case queue = "Queue"
        case deadLetters = "Dead letters"
        case purchases = "Purchases"

        var path: String {
            switch self {
            case .queue: "/"
            case .deadLetters: "/dead-letters"
            case .purchases: "/purchases"
            }
        }
    }

    static let securityHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
    ]

    static func page(_ title: String, section: Section?, operatorName: String, notice: String? = nil, status: Int = 200,
                     _ content: HTML) -> HTTPResponse {
        let nav = HTML([Section.queue, .deadLetters, .purchases].map { item in
            item == section ? "<a href=\"\(item.path)\" aria-current=\"page\">\(item.rawValue)</a>"
                : "<a href=\"\(item.path)\">\(item.rawValue)</a>"
        })
        let banner: HTML = notice.map { "<p class=\"notice\" role=\"status\">\($0)</p>" } ?? .empty
        let document: HTML = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · StoreSync</title>
            <link rel="icon" href="data:,">
            <link rel="stylesheet" href="\(Assets.stylesheetPath)">
            <script src="\(Assets.scriptPath)" defer></script>
            </head>
            <body>
            <a class="skip" href="#main">Skip to content</a>
            <header><span class="brand">StoreSync on-call</span><nav>\(nav)</nav>
            <span class="who">\(operatorName)</span></header>
            <main id="main">
            <h1>\(title)</h1>
            \(banner)\(content)
            </main>
            </body>
            </html>
            """
        return HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + securityHeaders,
                            body: Data(document.markup.utf8))
    }

    /// A page's answer to a request it cannot serve (a bad id, a malformed query), in the page frame.
    static func problem(_ status: Int, _ message: String, operatorName: String) -> HTTPResponse {
        let title = status == 404 ? "Not found" : status == 403 ? "Refused" : "Cannot do that"
        return page(title, section: nil, operatorName: operatorName, status: status, "<p>\(message)</p>")
    }

    static func redirect(to location: String) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("Location", location)] + securityHeaders)
    }

    /// A path with its query, empty values left out.
    static func link(_ path: String, _ fields: [(String, String?)]) -> String {
        let present = fields.compactMap { name, value in value.flatMap { $0.isEmpty ? nil : (name, $0) } }
        return present.isEmpty ? path : path + "?" + PercentEncoding.form(present)
    }

    // MARK: Values

    static func time(_ date: Date?) -> HTML {
        guard let date else { return "—" }
        let text = date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false)
            .dateSeparator(.dash).timeSeparator(.colon).dateTimeSeparator(.space))
        return "<time datetime=\"\(date.formatted(.iso8601))\">\(text)Z</time>"
    }

    /// How long ago, in the largest whole unit: on-call reads "3 min" faster than a timestamp.
    static func age(_ date: Date, now: Date) -> String {
        duration(max(0, now.timeIntervalSince(date)))
    }

    static func duration(_ seconds: Double) -> String {
        switch seconds {
        case ..<60: "\(Int(seconds)) s"
        case ..<3600: "\(Int(seconds / 60)) min"
        case ..<(2 * 86400): "\(Int(seconds / 3600)) h"
        default: "\(Int(seconds / 86400)) d"
        }
    }

    static func money(_ money: Money) -> String {
        "\(money.decimal) \(money.currency)"
    }

    /// Text cut to `limit` characters for a table cell, whole in its `title`.
    static func clipped(_ text: String, _ limit: Int = 90) -> HTML {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        guard flat.count > limit else { return "\(flat)" }
        return "<span title=\"\(flat)\">\(String(flat.prefix(limit - 1)))…</span>"
    }

    /// A definition list of label–value pairs.
    static func facts(_ rows: [(String, HTML)]) -> HTML {
        "<dl class=\"facts\">\(rows.map { label, value -> HTML in "<dt>\(label)</dt><dd>\(value)</dd>" })</dl>"
    }

    /// A table that scrolls sideways on a narrow screen instead of overflowing it.
    static func table(_ caption: String, headers: [String], rows: [[HTML]], empty: String) -> HTML {
        guard !rows.isEmpty else { return "<p class=\"empty\">\(empty)</p>" }
        let head = HTML(headers.map { "<th scope=\"col\">\($0)</th>" })
        let body = HTML(rows.map { cells in "<tr>\(cells.map { cell -> HTML in "<td>\(cell)</td>" })</tr>" })
        return """
            <div class="scroll" tabindex="0" role="region" aria-label="\(caption)"><table>
            <caption>\(caption)</caption><thead><tr>\(head)</tr></thead><tbody>\(body)</tbody></table></div>
            """
    }
}
