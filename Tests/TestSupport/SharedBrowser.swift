import Testing

/// `@Suite(.browser)`: one Chromium for all the suite's tests, which reach it as `Browser.shared`.
///
/// A launch costs about 0.4 s and the first page another 0.3 s on an idle machine, and far more with the suite's
/// other tests in parallel on two cores; pages of one browser are kept apart by their browser contexts, so
/// sharing costs the tests no isolation and lets them still run in parallel.
public struct SharedBrowser: SuiteTrait, TestScoping {
    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await Browser.with { browser in
            try await Browser.$suiteBrowser.withValue(browser) { try await function() }
        }
    }
}

extension Trait where Self == SharedBrowser {
    /// Launches one browser before the suite's first test and closes it after its last.
    public static var browser: Self { SharedBrowser() }
}

extension Browser {
    @TaskLocal static var suiteBrowser: Browser?

    /// The browser of the enclosing `@Suite(.browser)`.
    public static var shared: Browser {
        get throws {
            guard let suiteBrowser else { throw TestSetupError("Browser.shared is only set in a suite marked @Suite(.browser)") }
            return suiteBrowser
        }
    }
}
