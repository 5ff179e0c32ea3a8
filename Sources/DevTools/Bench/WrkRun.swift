import Foundation

/// One run of `wrk` (the HTTP load generator `deploy/dev.sh` installs) over keep-alive connections, its
/// figures read from its report: a load generator in another process, so what this process spends per
/// request is the server's alone.
struct WrkRun: Sendable {
    let requestsPerSecond: Double
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    let requests: Int
    let non2xx: Int

    /// Runs `wrk` against `url` with `script` (Lua: the requests' paths and headers) for `seconds`.
    static func run(url: String, script: String, connections: Int, seconds: Int) async throws -> WrkRun {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("storesync-bench-\(UUID().uuidString).lua")
        try Data(script.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["wrk", "-t2", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", file.path, url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let finished = AsyncStream<Void> { continuation in
            process.terminationHandler = { _ in continuation.finish() }
        }
        do {
            try process.run()
        } catch {
            throw BenchError("cannot run wrk (deploy/dev.sh installs it): \(error)")
        }
        // The pipe is read to its end on a thread of its own: a blocking read must not hold one of the pool's.
        let handle = output.fileHandleForReading
        let text = await withCheckedContinuation { (done: CheckedContinuation<String, Never>) in
            Thread { done.resume(returning: String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)) }.start()
        }
        for await _ in finished {}
        guard process.terminationStatus == 0 else { throw BenchError("wrk failed: \(text.suffix(500))") }
        return try parse(text)
    }

    /// The figures of wrk 4's `--latency` report.
    static func parse(_ report: String) throws -> WrkRun {
        func number(after label: String) -> Substring? {
            report.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }?
                .split(separator: " ", omittingEmptySubsequences: true).dropFirst(label.split(separator: " ").count).first
        }
        func milliseconds(_ text: Substring?) throws -> Double {
            guard let text, let unit = text.firstIndex(where: { $0.isLetter }), let value = Double(text[..<unit]) else {
                throw BenchError("wrk's report has no latency where expected:\n\(report.suffix(800))")
            }
            switch text[unit...] {
            case "us": return value / 1000
            case "ms": return value
            case "s": return value * 1000
            default: return value * 60_000
            }
        }
        guard let rate = number(after: "Requests/sec:").flatMap({ Double($0) }),
              let total = report.firstMatch(of: /([0-9]+) requests in/)?.output.1, let requests = Int(total) else {
            throw BenchError("wrk's report has no request rate:\n\(report.suffix(800))")
        }
        return WrkRun(requestsPerSecond: rate, p50Milliseconds: try milliseconds(number(after: "50%")),
                      p99Milliseconds: try milliseconds(number(after: "99%")), requests: requests,
                      non2xx: number(after: "Non-2xx or 3xx responses:").flatMap { Int($0) } ?? 0)
    }
}
