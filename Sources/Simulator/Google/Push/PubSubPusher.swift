import Foundation
import HTTP
import Logging

/// Publishes notifications the way a Pub/Sub push subscription delivers them: `POST` of the wrapped message
/// (`{"message": {"data", "messageId", "message_id", "publishTime", "publish_time", "attributes"},
/// "subscription"}`) with `Authorization: Bearer <OIDC token>`, and — unless the answer is 102, 200, 201, 202
/// or 204 — redelivery of the same message with exponential backoff until acknowledged or out of attempts.
///
/// The first delivery (and any injected duplicates) is awaited, so a scenario returns with StoreSync's
/// answer; redeliveries run in the background and are recorded in the push log.
final class PubSubPusher: Sendable {
    private struct Message: Sendable {
        let messageId: String
        let body: Data
        let tokenFault: PushTokenFault?
    }

    private struct Log: Sendable {
        var records: [PlayPushRecord] = []
        var messages: [String: Message] = [:]
        var nextMessageNumber: Int64 = 10_000_000_000_000
        var redeliveries: [String: Task<Void, Never>] = [:]
        var stopped = false

        func index(of messageId: String) -> Int? { records.lastIndex { $0.messageId == messageId } }
    }

    /// The log keeps this many messages; older ones are forgotten (and no longer redelivered).
    static let maxLoggedMessages = 10_000
    private static let userAgent = "APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)"

    private let target: PlayPushTarget?
    private let client: HTTPClient?
    private let keys: PushKeyRing
    private let policy: PushRetryPolicy
    private let log = Locked(Log())
    private let logger = Logger(component: "simulator")

    init(target: PlayPushTarget?, client configuration: HTTPClientConfiguration, keys: PushKeyRing,
         policy: PushRetryPolicy) throws {
        self.target = target
        var configuration = configuration
        configuration.userAgent = Self.userAgent
        client = target == nil ? nil : try HTTPClient(configuration: configuration)
        self.keys = keys
        self.policy = policy
    }

    var records: [PlayPushRecord] { log.withLock { $0.records } }

    func record(_ messageId: String) -> PlayPushRecord? {
        log.withLock { log in log.index(of: messageId).map { log.records[$0] } }
    }

    /// Publishes `notification` at `publishTime` (simulated milliseconds) and delivers it once, plus the
    /// duplicates `plan` asks for; a message not acknowledged is then redelivered in the background.
    func publish(_ notification: PlayNotification, publishTime: Int64, plan: PushFaultPlan) async throws -> PlayPushRecord {
        let data = try notification.json()
        let time = PlayJSON.time(publishTime)
        let messageId = log.withLock { log -> String in
            log.nextMessageNumber += 1
            return String(log.nextMessageNumber)
        }
        let envelope: [String: Any] = [
            "message": ["data": data.base64EncodedString(), "messageId": messageId, "message_id": messageId,
                        "publishTime": time, "publish_time": time, "attributes": [String: String]()] as [String: Any],
            "subscription": target?.subscription ?? PlayPushTarget.defaultSubscription,
        ]
        let message = Message(messageId: messageId, body: try JSONBody.encode(envelope), tokenFault: plan.tokenFault)
        let record = PlayPushRecord(messageId: messageId, publishTime: time, data: String(decoding: data, as: UTF8.self),
                                    kind: notification.kind, notificationType: notification.notificationType,
                                    purchaseToken: notification.purchaseToken, tokenFault: plan.tokenFault)
        log.withLock { log in
            log.records.append(record)
            log.messages[messageId] = message
            if log.records.count > Self.maxLoggedMessages {
                let forgotten = log.records.removeFirst().messageId
                log.messages[forgotten] = nil
                log.redeliveries.removeValue(forKey: forgotten)?.cancel()
            }
        }
        if plan.dropped {
            note(.dropped, for: messageId)
        } else {
            for _ in 0...plan.copies { await deliver(message) }
            scheduleRedeliveryIfNeeded(messageId)
        }
        return self.record(messageId) ?? record
    }

    /// Delivers the most recent message again `times` times in a row: duplicates with the same `messageId`.
    func resendLast(times: Int) async throws -> PlayPushRecord {
        guard (1...100).contains(times) else { throw SimulatorError(.invalidArgument, "resend 1...100 times, not \(times)") }
        guard let message = log.withLock({ log in log.records.last.flatMap { log.messages[$0.messageId] } }) else {
            throw SimulatorError(.nothingToResend, "no push has been published yet")
        }
        for _ in 0..<times { await deliver(message) }
        return record(message.messageId)!
    }

    /// Stops redelivering and closes the client.
    func shutdown() async {
        let pending = log.withLock { log -> [Task<Void, Never>] in
            log.stopped = true
            defer { log.redeliveries = [:] }
            return Array(log.redeliveries.values)
        }
        for task in pending { task.cancel() }
        for task in pending { await task.value }
        await client?.shutdown()
    }

    // MARK: Delivery

    private func deliver(_ message: Message) async {
        guard let target, let client else {
            note(.notSent, for: message.messageId)
            return
        }
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if let host = target.host { headers.append(("Host", host)) }
        let delivery: NotificationDelivery
        do {
            if let authorization = try keys.authorization(for: target, fault: message.tokenFault) {
                headers.append(("Authorization", authorization))
            }
            let response = try await client.send(HTTPClientRequest(method: "POST", url: target.url, headers: headers,
                                                                   body: message.body, timeout: target.timeout))
            delivery = .answered(response.status)
        } catch {
            logger.warning("push not delivered", ["url": .string(target.url), "error": .string("\(error)")])
            delivery = .failed("\(error)")
        }
        note(delivery, for: message.messageId)
    }

    private func note(_ delivery: NotificationDelivery, for messageId: String) {
        log.withLock { log in
            guard let index = log.index(of: messageId) else { return }
            log.records[index].attempts.append(.init(number: log.records[index].attempts.count + 1, delivery: delivery))
            if PlayPushRecord.acknowledges(delivery) { log.records[index].acknowledged = true }
        }
    }

    /// Starts the background redelivery of `messageId` unless it was acknowledged, is already being
    /// redelivered, has used its attempts, or nothing is sent at all.
    private func scheduleRedeliveryIfNeeded(_ messageId: String) {
        guard target != nil else { return }
        log.withLock { log in
            guard !log.stopped, log.redeliveries[messageId] == nil, let index = log.index(of: messageId),
                  !log.records[index].acknowledged else { return }
            guard log.records[index].attempts.count < policy.maxAttempts else {
                log.records[index].abandoned = true
                return
            }
            log.redeliveries[messageId] = Task { await self.redeliver(messageId) }
        }
    }

    private func redeliver(_ messageId: String) async {
        var backoff = policy.minimumBackoff
        while true {
            do {
                try await Task.sleep(for: backoff)
            } catch {
                return
            }
            let next = log.withLock { log -> Message? in
                guard !log.stopped, let index = log.index(of: messageId), !log.records[index].acknowledged else { return nil }
                return log.messages[messageId]
            }
            guard let next else { break }
            await deliver(next)
            let finished = log.withLock { log -> Bool in
                guard let index = log.index(of: messageId) else { return true }
                if log.records[index].acknowledged { return true }
                if log.records[index].attempts.count >= policy.maxAttempts {
                    log.records[index].abandoned = true
                    return true
                }
                return false
            }
            if finished { break }
            backoff = min(backoff * 2, policy.maximumBackoff)
        }
        log.withLock { _ = $0.redeliveries.removeValue(forKey: messageId) }
    }
}
