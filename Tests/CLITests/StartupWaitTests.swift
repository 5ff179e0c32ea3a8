import Foundation
import HTTP
import Testing
import TestSupport

/// `serve` and `work` started while PostgreSQL is down wait for it — logging each attempt, unready
/// meanwhile — and come up once it accepts connections, instead of exiting and spending a supervisor's
/// restart budget on an outage that ends by itself.
@Suite struct StartupWaitTests {
    /// The port a daemon logged in its `listening` / `metrics listening` line.
    static func loggedPort(_ child: ChildProcess, message: String) throws -> Int? {
        for line in child.stderr.split(separator: "\n") where line.contains(#""message":"\#(message)""#) {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            return object["port"] as? Int
        }
        return nil
    }

    @Test("a daemon started during an outage waits, answers /readyz 503, and is ready once the database is back",
          arguments: [(["serve", "--listen", "127.0.0.1:0"], "listening"),
                      (["work", "--metrics-listen", "127.0.0.1:0", "--concurrency", "2"], "metrics listening")])
    func waitsForTheDatabase(_ command: [String], listeningMessage: String) async throws {
        let cluster = try await PrivatePostgres.start()
        let client = try HTTPClient()
        do {
            try await cluster.crash()
            let daemon = try ChildProcess("storesync", command, environment: ["DATABASE_URL": cluster.url])
            try await eventually("the daemon to log a second wait for the database; stderr: \(daemon.stderr.suffix(1500))") {
                daemon.stderr.contains(#""attempt":2"#) && daemon.stderr.contains("waiting for the database")
            }
            #expect(daemon.isRunning)
            let port = try #require(try Self.loggedPort(daemon, message: listeningMessage))
            let readyz = HTTPClientRequest(url: "http://127.0.0.1:\(port)/readyz", timeout: .seconds(10))
            do {
                #expect(try await client.send(readyz).status == 503)
            } catch {
                Issue.record("\(error); running: \(daemon.isRunning); stderr: \(daemon.stderr.suffix(3000))")
            }
            #expect(try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz")).status == 200)

            try await cluster.startServer()
            try await eventually("/readyz to answer 200 once the database is back; stderr: \(daemon.stderr.suffix(1500))") {
                (try? await client.send(readyz).status) == 200
            }
            try await eventually("the daemon to log that the database is ready") { daemon.stderr.contains("database ready") }
            daemon.signal(SIGTERM)
            #expect(try await daemon.wait(timeout: .seconds(30)) == 0)
        } catch {
            await client.shutdown()
            await cluster.destroy()
            throw error
        }
        await client.shutdown()
        await cluster.destroy()
    }

    @Test("a stop requested while a daemon waits for the database ends it cleanly", arguments: ["serve", "work"])
    func stopWhileWaiting(_ command: String) async throws {
        let arguments = command == "serve" ? ["serve", "--listen", "127.0.0.1:0"] : ["work", "--metrics-listen", "off"]
        let daemon = try ChildProcess("storesync", arguments,
                                      environment: ["DATABASE_URL": "host=/nonexistent-storesync-socket-dir dbname=x"])
        try await eventually("the daemon to wait for the database; stderr: \(daemon.stderr.suffix(1500))") {
            daemon.stderr.contains("waiting for the database")
        }
        daemon.signal(SIGTERM)
        #expect(try await daemon.wait(timeout: .seconds(30)) == 0)
    }
}
