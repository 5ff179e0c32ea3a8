@testable import Console
import Testing

/// Text put into a page is escaped, in element content and in attribute values alike; markup the console builds
/// itself is not.
@Suite struct HTMLTests {
    @Test(arguments: [
        ("plain text", "plain text"),
        ("", ""),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("fish & chips", "fish &amp; chips"),
        ("&amp; stays text", "&amp;amp; stays text"),
        (#"say "hi""#, "say &quot;hi&quot;"),
        ("it's", "it&#39;s"),
        ("é, 日本, 🙂", "é, 日本, 🙂"),
        ("<a href='x' title=\"y\">&</a>", "&lt;a href=&#39;x&#39; title=&quot;y&quot;&gt;&amp;&lt;/a&gt;"),
    ])
    func textIsEscaped(text: String, escaped: String) {
        #expect(HTML.escape(text) == escaped)
        let html: HTML = "<p>\(text)</p>"
        #expect(html.markup == "<p>\(escaped)</p>")
    }

    /// A value that tries to close its attribute stays inside it, whichever quote it uses: the only quotes and
    /// angle brackets left are the template's own.
    @Test(arguments: [#"" onfocus="alert(1)"#, "' onfocus='alert(1)", #""><script>alert(1)</script>"#])
    func aValueCannotLeaveItsAttribute(value: String) {
        let html: HTML = "<input name=\"q\" value=\"\(value)\"><input value='\(value)'>"
        #expect(html.markup.filter { $0 == "<" || $0 == ">" }.count == 4)
        #expect(html.markup.filter { $0 == "\"" }.count == 4)
        #expect(html.markup.filter { $0 == "'" }.count == 2)
    }

    @Test func markupNilAndNumbersAreInterpolatedAsThemselves() {
        let inner: HTML = "<b>\("x<y")</b>"
        let missing: String? = nil
        let html: HTML = "<p>\(inner)\([inner, inner])\(missing)\(42)\(Int64(-7))</p>"
        #expect(html.markup == "<p><b>x&lt;y</b><b>x&lt;y</b><b>x&lt;y</b>42-7</p>")
        #expect(HTML([inner, .empty, "<i>"]).markup == "<b>x&lt;y</b><i>")
    }
}
