import Foundation
import HTTP
import TestSupport
import Testing

/// The browser driver the on-call console's tests use, against pages our own server serves on loopback: real
/// clicks and keys, scripts, dialogs, console errors, failed loads, screenshots and a phone-sized viewport.
/// One Chromium for the suite (`.browser`); each test has a page and a server of its own, so they run in parallel.
@Suite(.browser) struct BrowserTests {
    @Test func aRealClickPostsTheFormAndFollowsTheRedirect() async throws {
        let posts = Recorder()
        try await withSite({ router in
            router.route("GET", "/form") { _ in
                page(#"""
                    <form method="post" action="/submit">
                      <input id="name" name="name" value="Someone">
                      <input type="hidden" name="trusted" value="no">
                      <button type="submit">Save</button>
                    </form>
                    <script>
                      // Only a click the browser dispatched as a user's is trusted; element.click() is not.
                      document.querySelector("button").addEventListener("click", event => {
                        document.querySelector("[name=trusted]").value = event.isTrusted ? "yes" : "no";
                      });
                    </script>
                    """#)
            }
            router.route("POST", "/submit") { request in
                posts.record(request)
                let name = PercentEncoding.decodeForm(request.body)?.first { $0.name == "name" }?.value ?? ""
                return HTTPResponse(status: 303, headers: [("location", "/done?name=\(PercentEncoding.encode(name))")])
            }
            router.route("GET", "/done") { request in
                let name = PercentEncoding.decodeForm(Array((request.query ?? "").utf8))?.first?.value ?? ""
                return page("<h1>Saved \(escaped(name))</h1>")
            }
        }) { base, page in
            try await page.goto("\(base)/form")
            try await page.fill("#name", "Ada Lovelace")
            try await page.clickAndWaitForNavigation("button")

            #expect(posts.requests.map(\.method) == ["POST"])
            let fields = posts.requests.first.flatMap { PercentEncoding.decodeForm($0.body) } ?? []
            #expect(fields.map { "\($0.name)=\($0.value)" } == ["name=Ada Lovelace", "trusted=yes"])
            #expect(try await page.text("h1") == "Saved Ada Lovelace")
            #expect(try await page.evaluate("location.pathname") == "/done")
            try await page.expectNoConsoleErrors()
        }
    }

    @Test func evaluateReturnsJSONAwaitsPromisesAndThrowsWithTheException() async throws {
        try await withSite({ router in
            router.route("GET", "/") { _ in page("<p id=greeting>Hello</p>") }
        }) { base, page in
            try await page.goto("\(base)/")
            #expect(try await page.evaluate("1 + 2") == 3)
            #expect(try await page.evaluate("({ list: [1, 'two', true, null] })") == ["list": [1, "two", true, .null]])
            #expect(try await page.evaluate("new Promise(resolve => setTimeout(() => resolve('later'), 10))") == "later")
            #expect(try await page.evaluate("undefined") == .null)
            #expect(try await page.text("#greeting") == "Hello")
            #expect(try await page.exists("#greeting"))
            #expect(try await !page.exists("#farewell"))

            let thrown = await #expect(throws: PageError.self) { try await page.evaluate("throw new Error('boom')") }
            #expect(thrown?.description.contains("Error: boom") == true)
            let rejected = await #expect(throws: PageError.self) {
                try await page.evaluate("Promise.reject(new TypeError('refused'))")
            }
            #expect(rejected?.description.contains("TypeError: refused") == true)
            await #expect(throws: PageError.self) { try await page.text("#farewell") }
            await #expect(throws: PageError.self) { try await page.click("#farewell") }
        }
    }

    /// A command the page never answers fails within its bound, naming the command.
    @Test func anUnansweredCommandTimesOutNamingIt() async throws {
        try await withSite({ router in
            router.route("GET", "/") { _ in page("<p>Waiting</p>") }
        }) { base, page in
            try await page.goto("\(base)/")
            let timedOut = await #expect(throws: TimedOut.self) {
                try await page.evaluate("new Promise(() => {})", timeout: .milliseconds(200))
            }
            #expect(timedOut?.description.contains("Runtime.evaluate") == true)
            #expect(try await page.evaluate("'still answering'") == "still answering")
        }
    }

    @Test func confirmDialogsAreAcceptedOrDismissed() async throws {
        try await withSite({ router in
            router.route("GET", "/") { _ in
                page(#"""
                    <button onclick="document.body.dataset.answer = confirm('Retry job 42?')">Retry</button>
                    """#)
            }
        }) { base, page in
            try await page.goto("\(base)/")
            page.acceptDialogs(true)
            try await page.click("button")
            #expect(try await page.evaluate("document.body.dataset.answer") == "true")

            page.acceptDialogs(false)
            try await page.click("button")
            #expect(try await page.evaluate("document.body.dataset.answer") == "false")
            #expect(page.dialogs == ["confirm: Retry job 42?", "confirm: Retry job 42?"])
            try await page.expectNoConsoleErrors()
        }
    }

    @Test func tabMovesTheFocusAndEnterActivatesTheFocusedButton() async throws {
        try await withSite({ router in
            router.route("GET", "/") { _ in
                page(#"""
                    <input id="first"> <input id="second">
                    <button id="go" onclick="document.body.dataset.pressed = 'yes'">Go</button>
                    """#)
            }
        }) { base, page in
            try await page.goto("\(base)/")
            let focused = "document.activeElement.id"
            try await page.press(.tab)
            #expect(try await page.evaluate(focused) == "first")
            try await page.press(.tab)
            #expect(try await page.evaluate(focused) == "second")
            try await page.press(.shiftTab)
            #expect(try await page.evaluate(focused) == "first")
            try await page.press(.tab)
            try await page.press(.tab)
            #expect(try await page.evaluate(focused) == "go")
            try await page.press(.enter)
            #expect(try await page.evaluate("document.body.dataset.pressed") == "yes")
        }
    }

    @Test func consoleErrorsUncaughtExceptionsAndFailedLoadsAreReported() async throws {
        try await withSite({ router in
            router.route("GET", "/clean") { _ in page("<p>Fine</p><script>console.log('only a log')</script>") }
            router.route("GET", "/logs-error") { _ in page("<script>console.error('bad thing', 42)</script>") }
            router.route("GET", "/throws") { _ in page("<script>throw new Error('boom')</script>") }
            router.route("GET", "/missing-image") { _ in page("<img src='/missing.png' alt=''>") }
            router.route("GET", "/blocked-script") { _ in
                var blocked = page("<script>document.title = 'ran'</script>")
                blocked.headers.append(("content-security-policy", "script-src 'none'"))
                return blocked
            }
        }) { base, page in
            try await page.goto("\(base)/clean")
            #expect(try await page.consoleErrors() == [])
            try await page.expectNoConsoleErrors()

            try await page.goto("\(base)/logs-error")
            try await page.goto("\(base)/throws")
            try await page.goto("\(base)/missing-image")
            try await page.goto("\(base)/blocked-script")
            let errors = try await page.consoleErrors()
            #expect(errors.count == 4, "\(errors)")
            #expect(errors.contains { $0.hasPrefix("console.error: bad thing 42 at \(base)/logs-error") }, "\(errors)")
            #expect(errors.contains { $0.hasPrefix("uncaught Error: boom at \(base)/throws") }, "\(errors)")
            #expect(errors.contains { $0.contains("404") && $0.contains("\(base)/missing.png") }, "\(errors)")
            #expect(errors.contains { $0.hasPrefix("security: ") && $0.contains("Content Security Policy") }, "\(errors)")
            await withKnownIssue("expectNoConsoleErrors records them as an issue") {
                try await page.expectNoConsoleErrors()
            }
        }
    }

    @Test func aDocumentThatAnswersAnHTTPErrorFailsGoto() async throws {
        try await withSite({ router in
            router.route("GET", "/empty-404") { _ in HTTPResponse(status: 404) }
        }) { base, page in
            // The router's own 404 has a body, which Chromium shows; an empty one gets Chromium's error page.
            let missing = await #expect(throws: PageError.self) { try await page.goto("\(base)/nope") }
            #expect(missing?.description == "\(base)/nope answered HTTP 404")
            let empty = await #expect(throws: PageError.self) { try await page.goto("\(base)/empty-404") }
            #expect(empty?.description.contains("ERR_HTTP_RESPONSE_CODE_FAILURE") == true)
        }
    }

    @Test func aScreenshotIsAPNGOfTheWholePageAsWideAsTheViewport() async throws {
        try await withSite({ router in
            router.route("GET", "/tall") { _ in page("<div style='height: 2000px; background: #3a6'>Tall</div>") }
        }, width: 640, height: 480) { base, page in
            try await page.goto("\(base)/tall")
            let png = try await page.screenshot()
            #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            // IHDR comes first: width and height, big-endian, at bytes 16 and 20.
            let (width, height) = (bigEndian(png, at: 16), bigEndian(png, at: 20))
            #expect(width == 640)
            #expect(height >= 2000)

            let file = try await page.saveScreenshot("browser-tests-tall-page")
            #expect(file.lastPathComponent == "browser-tests-tall-page.png")
            #expect(try Data(contentsOf: file).prefix(8) == png.prefix(8))
        }
    }

    @Test func aPhoneSizedViewportLaysThePageOutAt360Pixels() async throws {
        try await withSite({ router in
            router.route("GET", "/") { _ in page("<p>Narrow</p>") }
        }, width: 360, height: 640) { base, page in
            try await page.goto("\(base)/")
            #expect(try await page.evaluate("document.documentElement.clientWidth") == 360)
            #expect(try await page.evaluate("innerWidth") == 360)
        }
    }
}

/// Serves `configure`'s routes on loopback and runs `body` with their base URL and a page of the suite's browser;
/// stops both whatever happens.
private func withSite(_ configure: (inout HTTPRouter) -> Void, width: Int = 1280, height: Int = 800,
                      _ body: (String, Page) async throws -> Void) async throws {
    let (server, base) = try startServer(configure)
    do {
        try await Browser.shared.withPage(width: width, height: height) { try await body(base, $0) }
    } catch {
        await server.stop(grace: .seconds(1))
        throw error
    }
    await server.stop(grace: .seconds(1))
}

/// A UTF-8 HTML document around `body`. The empty icon keeps Chromium from asking for /favicon.ico, whose
/// 404 would count as a console error.
private func page(_ body: String) -> HTTPResponse {
    let html = #"<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">"#
        + "<title>Test page</title></head><body>\(body)</body></html>"
    return HTTPResponse(status: 200, headers: [("content-type", "text/html; charset=utf-8")], body: Data(html.utf8))
}

private func escaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
}

private func bigEndian(_ data: Data, at offset: Int) -> Int {
    data.dropFirst(offset).prefix(4).reduce(0) { $0 << 8 | Int($1) }
}
