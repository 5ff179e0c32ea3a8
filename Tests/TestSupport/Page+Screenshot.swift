import Foundation

extension Page {
    /// A PNG of the whole page, beyond the viewport down to the end of its content, at one device pixel per CSS
    /// pixel: as wide as the viewport unless the content overflows it sideways.
    public func screenshot() async throws -> Data {
        let content = try await send("Page.getLayoutMetrics")["cssContentSize"]
        let contentWidth = content?["width"]?.number ?? Double(width)
        let contentHeight = content?["height"]?.number ?? Double(height)
        let shot = try await send("Page.captureScreenshot", [
            "format": "png",
            "captureBeyondViewport": true,
            "clip": ["x": 0, "y": 0, "width": .number(contentWidth.rounded(.up)),
                     "height": .number(contentHeight.rounded(.up)), "scale": 1],
        ])
        guard let base64 = shot["data"]?.string, let png = Data(base64Encoded: base64) else {
            throw DevToolsError(description: "Page.captureScreenshot answered no image")
        }
        return png
    }

    /// Saves `screenshot()` as `name.png` in `screenshotsDirectory` (for the README to show, for a human to look
    /// at after a failure) and returns where.
    @discardableResult
    public func saveScreenshot(_ name: String) async throws -> URL {
        guard !name.isEmpty, !name.contains("/") else {
            throw TestSetupError("a screenshot name is a file name without .png: \(name)")
        }
        let directory = Self.screenshotsDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("\(name).png")
        try await screenshot().write(to: file)
        return file
    }

    /// `STORESYNC_SCREENSHOTS_DIR` when set, else `.build/screenshots` in the package (found from this file's
    /// path: the tests run from anywhere).
    public static var screenshotsDirectory: URL {
        if let directory = ProcessInfo.processInfo.environment["STORESYNC_SCREENSHOTS_DIR"], !directory.isEmpty {
            return URL(fileURLWithPath: directory)
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent() // TestSupport
            .deletingLastPathComponent() // Tests
            .deletingLastPathComponent()
        return package.appendingPathComponent(".build/screenshots")
    }
}
