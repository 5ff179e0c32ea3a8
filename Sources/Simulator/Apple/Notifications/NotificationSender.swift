import Foundation
import HTTP
import Logging

/// Posts notifications as the App Store does: `POST` of `{"signedPayload": "…"}` with
/// `Content-Type: application/json`, to the configured ingest URL and `Host`.
final class NotificationSender: Sendable {
    private let target: NotificationTarget?
    private let client: HTTPClient?
    private let logger = Logger(component: "simulator")

    init(target: NotificationTarget?, configuration: HTTPClientConfiguration) throws {
        self.target = target
        client = target == nil ? nil : try HTTPClient(configuration: configuration)
    }

    /// Sends one notification and waits for the answer; a failure to get one is reported, not thrown.
    func deliver(_ signedPayload: String) async -> NotificationDelivery {
        guard let target, let client else { return .notSent }
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if let host = target.host { headers.append(("Host", host)) }
        let body = Data("{\"signedPayload\":\(JSON.quoted(signedPayload))}".utf8)
        do {
            let response = try await client.send(HTTPClientRequest(method: "POST", url: target.url, headers: headers,
                                                                   body: body, timeout: target.timeout))
            return .answered(response.status)
        } catch {
            logger.warning("notification not delivered", ["url": .string(target.url), "error": .string("\(error)")])
            return .failed("\(error)")
        }
    }

    func shutdown() async {
        await client?.shutdown()
    }
}
