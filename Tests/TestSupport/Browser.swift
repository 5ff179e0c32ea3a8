import Foundation

/// A headless Chromium from Debian, driven over the Chrome DevTools Protocol on `--remote-debugging-pipe`: for
/// tests that need a real browser (the on-call console's pages, their scripts, clicks, keyboard and layout).
///
/// One browser serves many pages at once: each `Page` gets a browser context of its own (cookies, storage and
/// cache apart), so tests running in parallel can share a browser — see `.browser` — instead of each paying
/// for a launch. Every command and every wait is bounded by `timeout`.
public final class Browser: Sendable {
    /// Bound on each command's answer and on each wait of the pages (a load, a navigation a click causes).
    public let timeout: Duration
    let pipe: DevToolsPipe
    private let process: ChildProcess
    private let profile: URL

    private init(pipe: DevToolsPipe, process: ChildProcess, profile: URL, timeout: Duration) {
        self.pipe = pipe
        self.process = process
        self.profile = profile
        self.timeout = timeout
    }

    /// Starts Chromium with a fresh profile and waits until it answers over its pipe.
    public static func launch(timeout: Duration = .seconds(30)) async throws -> Browser {
        let executable = try executable()
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: false)
        var opened: [Int32] = []
        let commands: (read: Int32, write: Int32), events: (read: Int32, write: Int32), process: ChildProcess
        do {
            commands = try ChildProcess.pipe()
            opened += [commands.read, commands.write]
            events = try ChildProcess.pipe()
            opened += [events.read, events.write]
            process = try ChildProcess(path: executable, arguments(profile: profile),
                                       descriptors: [3: commands.read, 4: events.write], ownProcessGroup: true)
        } catch {
            opened.forEach { Glibc.close($0) }
            try? FileManager.default.removeItem(at: profile)
            throw error
        }
        // Chromium holds its ends now; ours of them would keep the pipes open after it exits.
        Glibc.close(commands.read)
        Glibc.close(events.write)
        let browser = Browser(pipe: DevToolsPipe(commands: commands.write, events: events.read), process: process,
                              profile: profile, timeout: timeout)
        do {
            _ = try await browser.pipe.send("Browser.getVersion", timeout: timeout)
        } catch {
            try? await browser.close()
            throw TestSetupError("\(executable) did not answer over its DevTools pipe (\(error)); its stderr ends: "
                                 + process.stderr.suffix(2000))
        }
        return browser
    }

    /// Launches a browser, runs `body` with it and closes it, also when `body` throws.
    public static func with<T>(timeout: Duration = .seconds(30), _ body: (Browser) async throws -> T) async throws -> T {
        let browser = try await launch(timeout: timeout)
        let value: T
        do {
            value = try await body(browser)
        } catch {
            // `body`'s failure is the one to report; closing is tidying after it.
            try? await browser.close()
            throw error
        }
        try await browser.close()
        return value
    }

    /// A new tab of `width` × `height` CSS pixels (device scale 1) in a browser context of its own.
    public func newPage(width: Int = 1280, height: Int = 800) async throws -> Page {
        try await Page.open(in: self, width: width, height: height)
    }

    /// Opens a page, runs `body` with it and closes it, also when `body` throws.
    public func withPage<T>(width: Int = 1280, height: Int = 800, _ body: (Page) async throws -> T) async throws -> T {
        let page = try await newPage(width: width, height: height)
        let value: T
        do {
            value = try await body(page)
        } catch {
            try? await page.close()
            throw error
        }
        try await page.close()
        return value
    }

    /// Kills Chromium and every process it started, reaps it and removes its profile.
    ///
    /// Killed rather than asked to quit: nothing of the profile is worth keeping, and a browser that no longer
    /// answers must go as surely as one that does.
    public func close() async throws {
        pipe.close()
        process.signalGroup(SIGKILL)
        defer { try? FileManager.default.removeItem(at: profile) }
        _ = try await process.wait(timeout: timeout)
    }

    /// `chromium` on PATH, else Debian's /usr/bin/chromium.
    private static func executable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") + ["/usr/bin"] {
            let candidate = "\(directory)/chromium"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSetupError("cannot find chromium on PATH or at /usr/bin/chromium: install Debian's chromium package "
                             + "(`deploy/dev.sh test` installs it)")
    }

    private static func arguments(profile: URL) -> [String] {
        [
            "--headless",
            // Chromium's sandbox refuses to run as root, which is how CI runs the tests.
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            // A fresh profile per browser: no cookies, cache or history from another run or another test process.
            "--user-data-dir=\(profile.path)",
            // Screenshots and `clientWidth` the same whether or not the content is taller than the viewport.
            "--hide-scrollbars",
            // Nothing but the tests' own requests: CI may have no network, and no first-run page to dismiss.
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "about:blank",
        ]
    }
}
