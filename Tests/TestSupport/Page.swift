import Foundation
import Testing

/// Why a page did not do what a test asked: a navigation that failed or answered an HTTP error, a script that
/// threw, an element missing, hidden or covered.
public struct PageError: Error, CustomStringConvertible {
    public let description: String
}

/// One tab of a `Browser`, attached as a DevTools session of its own, in a browser context of its own.
///
/// Its events (navigations, loads, console errors, dialogs) are recorded from the moment it opens; `goto` and
/// the navigating click wait on them. Clicks and keys are real input events, dispatched by the browser as a
/// user's would be.
public final class Page: Sendable {
    public let width: Int
    public let height: Int
    private let browser: Browser
    private let session: String
    private let context: String
    let events: PageEvents

    private init(browser: Browser, session: String, context: String, events: PageEvents, width: Int, height: Int) {
        self.browser = browser
        self.session = session
        self.context = context
        self.events = events
        self.width = width
        self.height = height
    }

    static func open(in browser: Browser, width: Int, height: Int) async throws -> Page {
        let pipe = browser.pipe, timeout = browser.timeout
        func string(_ key: String, of method: String, _ params: JSONValue = [:], session: String? = nil) async throws -> String {
            let answer = try await pipe.send(method, params, session: session, timeout: timeout)
            guard let value = answer[key]?.string else { throw DevToolsError(description: "\(method) answered no \(key): \(answer)") }
            return value
        }
        let context = try await string("browserContextId", of: "Target.createBrowserContext")
        let page: Page
        do {
            let target = try await string("targetId", of: "Target.createTarget",
                                          ["url": "about:blank", "browserContextId": .string(context)])
            let session = try await string("sessionId", of: "Target.attachToTarget", ["targetId": .string(target), "flatten": true])
            let tree = try await pipe.send("Page.getFrameTree", session: session, timeout: timeout)
            let mainFrame = tree["frameTree"]?["frame"]?["id"]?.string ?? target
            // Answered at all because Chromium holds the page until a dialog is.
            let events = PageEvents(mainFrame: mainFrame) { [weak pipe] accept in
                try await pipe?.send("Page.handleJavaScriptDialog", ["accept": .bool(accept)], session: session,
                                     timeout: timeout)
            }
            pipe.listen(to: session, events)
            page = Page(browser: browser, session: session, context: context, events: events, width: width, height: height)
        } catch {
            // A page that fails to open must not stay behind in a browser that other tests share.
            _ = try? await pipe.send("Target.disposeBrowserContext", ["browserContextId": .string(context)], timeout: timeout)
            throw error
        }
        do {
            try await page.enableDomains()
        } catch {
            try? await page.close()
            throw error
        }
        return page
    }

    /// Turns on the events the page records and sets its viewport.
    private func enableDomains() async throws {
        for (method, params) in [
            ("Page.enable", [:]),
            ("Page.setLifecycleEventsEnabled", ["enabled": true]),
            ("Runtime.enable", [:]),
            ("Log.enable", [:]),
            ("Network.enable", [:]),
            ("Emulation.setDeviceMetricsOverride",
             ["width": .number(Double(width)), "height": .number(Double(height)), "deviceScaleFactor": 1, "mobile": false]),
            // Each page behaves as the focused one (focus events, :focus-visible, document.hasFocus()), however
            // many pages the browser has open.
            ("Emulation.setFocusEmulationEnabled", ["enabled": true]),
        ] as [(String, JSONValue)] {
            try await send(method, params)
        }
    }

    /// The browser's bound on each command and each wait.
    var timeout: Duration { browser.timeout }

    /// Sends a command to this page's session; its answer is awaited for `timeout`, by default the browser's.
    @discardableResult
    func send(_ method: String, _ params: JSONValue = [:], timeout: Duration? = nil) async throws -> JSONValue {
        try await browser.pipe.send(method, params, session: session, timeout: timeout ?? browser.timeout)
    }

    /// Loads `url` and waits for its load event; throws when it cannot be loaded or its document answers an HTTP
    /// status of 400 or more.
    public func goto(_ url: String) async throws {
        let navigation = try await send("Page.navigate", ["url": .string(url)])
        if let error = navigation["errorText"]?.string, !error.isEmpty {
            throw PageError(description: "\(url) did not load: \(error)")
        }
        // No loader: a same-document navigation (only the fragment changed), which has no load event.
        guard let loader = navigation["loaderId"]?.string else { return }
        try await loaded(loader, url)
    }

    /// Waits for the load event of the document `loader` fetches and checks its HTTP status.
    func loaded(_ loader: String, _ url: String) async throws {
        let record = try await events.wait("the load event of \(url)", within: timeout) { record in
            record.loaded.contains(loader) ? record : nil
        }
        if let document = record.documents[loader], document.status >= 400 {
            throw PageError(description: "\(document.url) answered HTTP \(document.status)")
        }
    }

    /// Runs `expression` in the page (awaiting it if it is a promise) and returns its value as JSON: `undefined`
    /// as `.null`; NaN, infinities, -0 and BigInts, which JSON cannot hold, as their text.
    /// Throws with the exception's text when it throws, and `TimedOut` when it does not settle within
    /// `timeout` (by default the browser's).
    public func evaluate(_ expression: String, timeout: Duration? = nil) async throws -> JSONValue {
        let answer = try await send("Runtime.evaluate",
                                    ["expression": .string(expression), "returnByValue": true, "awaitPromise": true],
                                    timeout: timeout)
        if let details = answer["exceptionDetails"] {
            let text = details["exception"]?["description"]?.string ?? details["text"]?.string ?? "an exception"
            throw PageError(description: "\(expression.prefix(200)) threw: \(text)")
        }
        let result = answer["result"]
        return result?["value"] ?? result?["unserializableValue"] ?? .null
    }

    /// Calls the JavaScript function `function` with `arguments` (passed as JSON, so no quoting of ours).
    func call(_ function: String, _ arguments: JSONValue...) async throws -> JSONValue {
        try await evaluate("(\(function))(\(try arguments.map { try $0.literal() }.joined(separator: ", ")))")
    }

    /// The rendered text of the first element `selector` matches (`innerText`: what a user reads).
    public func text(_ selector: String) async throws -> String {
        let text = try await call("s => document.querySelector(s)?.innerText ?? null", .string(selector))
        guard let text = text.string else { throw PageError(description: "no element matches \(selector)") }
        return text
    }

    /// Whether any element matches `selector` now.
    public func exists(_ selector: String) async throws -> Bool {
        try await call("s => document.querySelector(s) !== null", .string(selector)).bool ?? false
    }

    /// Whether dialogs (`confirm()`, `alert()`, `prompt()`) the page opens from now on are accepted (OK) or
    /// dismissed (Cancel). Dismissed until a test says otherwise; `dialogs` lists every one the page opened.
    public func acceptDialogs(_ accept: Bool) {
        events.acceptDialogs(accept)
    }

    /// "type: message" for each dialog the page opened, in order (e.g. `confirm: Retry job 42?`).
    public var dialogs: [String] { events.snapshot.dialogs }

    /// The console errors so far: `console.error` and failed `console.assert` calls, uncaught exceptions,
    /// resources that failed to load, scripts a policy blocked. A round trip to the page first, so that what
    /// the page reported before this call is in.
    public func consoleErrors() async throws -> [String] {
        _ = try await evaluate("0")
        return events.snapshot.consoleErrors
    }

    /// Records a test issue listing the console errors, if there are any: tests call it at the end, so that a
    /// page that works but logs errors still fails.
    public func expectNoConsoleErrors(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let errors = try await consoleErrors()
        guard !errors.isEmpty else { return }
        let url = try await evaluate("location.href").string ?? "the page"
        Issue.record(Comment(rawValue: "console errors on \(url):\n" + errors.joined(separator: "\n")),
                     sourceLocation: sourceLocation)
    }

    /// Closes the tab: disposing of its browser context closes it, and forgets its cookies and storage.
    public func close() async throws {
        browser.pipe.stopListening(to: session)
        try await browser.pipe.send("Target.disposeBrowserContext", ["browserContextId": .string(context)],
                                    timeout: browser.timeout)
    }
}
