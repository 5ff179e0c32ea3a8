import Foundation

/// A small bar chart drawn as inline SVG on the server: hours of queue history from what the database already
/// holds, with no charting library and no metrics store. Each bar has a tooltip with its exact value, and the
/// chart's label says what it shows for screen readers.
struct BarChart {
    struct Bar {
        let label: String
        let value: Int
    }

    let title: String
    let bars: [Bar]
    /// What the bars count, for the tooltips ("notifications", "dead letters").
    let unit: String

    private static let width = 480.0
    private static let height = 140.0
    private static let axis = 18.0

    var html: HTML {
        let most = bars.map(\.value).max() ?? 0
        let top = max(1, most)
        let slot = Self.width / Double(max(1, bars.count))
        let plot = Self.height - Self.axis
        let rects = HTML(bars.enumerated().map { index, bar -> HTML in
            let barHeight = plot * Double(bar.value) / Double(top)
            let x = Double(index) * slot + 1
            let y = plot - barHeight
            return """
                <rect class="bar" x="\(Self.number(x))" y="\(Self.number(y))" width="\(Self.number(max(1, slot - 2)))" \
                height="\(Self.number(barHeight))"><title>\(bar.label): \(bar.value) \(unit)</title></rect>
                """
        })
        // A label under every few bars, so they never overlap at 480 units across.
        let step = max(1, bars.count / 6)
        let labels = HTML(bars.enumerated().filter { $0.offset % step == 0 }.map { index, bar -> HTML in
            "<text x=\"\(Self.number(Double(index) * slot + 1))\" y=\"\(Self.number(Self.height - 4))\">\(bar.label)</text>"
        })
        let total = bars.reduce(0) { $0 + $1.value }
        return """
            <figure><figcaption>\(title) — \(total) in all, at most \(most) in one bar</figcaption>
            <svg class="chart" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" role="img" \
            aria-label="\(title): \(total) \(unit) in all, at most \(most) in one bar">\(rects)\(labels)</svg></figure>
            """
    }

    private static func number(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
