import CLI
import Foundation
import HTTP

/// One request to a running simulator's control API, for `storesync-dev simulator scenario|google …`: the base
/// URL checked, the JSON answer printed as is, exit 0 on a 2xx.
enum SimulatorControl {
    static func send(_ arguments: inout Arguments, urlHint: String, path prefix: String,
                     request: (inout Arguments) throws -> (method: String, path: String, body: Data?)) async throws -> Int32 {
        guard let base = try arguments.option("--url") else { throw UsageError("--url \(urlHint) is required") }
        guard base.hasPrefix("http://") || base.hasPrefix("https://") else { throw UsageError("--url must be an http(s) URL") }
        let url = base.hasSuffix("/") ? String(base.dropLast()) : base
        let (method, path, body) = try request(&arguments)
        try arguments.finish()

        let client = try HTTPClient()
        let outcome: Result<HTTPClientResponse, any Error>
        do {
            outcome = .success(try await client.send(HTTPClientRequest(
                method: method, url: url + prefix + path, headers: [("Content-Type", "application/json")], body: body,
                timeout: .seconds(60))))
        } catch {
            outcome = .failure(error)
        }
        await client.shutdown()
        let response = try outcome.get()
        Output.print(String(decoding: response.body, as: UTF8.self))
        return (200...299).contains(response.status) ? 0 : 1
    }
}
