import AppStore
import Foundation
import HTTP
import Logging
import TestPKI

/// The simulated App Store behind the HTTP server and the public facade: state, signing, notification
/// delivery, faults and counters. Scenario commands run through `run`, so the Swift API and the HTTP
/// control API change state and notify in exactly the same way.
final class SimulatorCore: Sendable {
    let state: Locked<StoreState>
    let signer: PayloadSigner
    let sender: NotificationSender
    let faults = FaultInjector()
    let counters = RequestCounters()
    let authenticator: APIAuthenticator
    /// Why recent server-API requests were refused with 401, newest last (at most 20), for tests and logs.
    let authenticationFailures = Locked<[String]>([])
    let logger = Logger(component: "simulator")

    init(apps: [String: SimulatedApp], start: Date, transactionNumberBase: Int64, pki: LocalApplePKI,
         sender: NotificationSender) {
        state = Locked(StoreState(apps: apps, start: start, transactionNumberBase: transactionNumberBase))
        signer = PayloadSigner(pki: pki)
        self.sender = sender
        authenticator = APIAuthenticator(apps: apps)
    }

    /// Applies one scenario command and, unless `silent`, signs and sends the notification it causes,
    /// waiting for the ingest's answer.
    func run(silent: Bool, _ change: (inout StoreState) throws -> ScenarioEvent) async throws -> ScenarioResult {
        let event = try state.withLock { try change(&$0) }
        let subscription = event.subscription
        guard !silent else {
            return ScenarioResult(originalTransactionId: subscription.originalTransactionId,
                                  transactionId: event.transaction.transactionId, status: subscription.status,
                                  notification: nil)
        }
        let uuid = UUID().uuidString.lowercased()
        let logged = LoggedNotification(notificationUUID: uuid, notificationType: event.notificationType,
                                        subtype: event.subtype, signedDate: event.signedDate,
                                        signedPayload: try signer.notification(event, uuid: uuid),
                                        bundleId: subscription.bundleId,
                                        originalTransactionId: subscription.originalTransactionId)
        state.withLock { $0.log(logged) }
        let delivery = await deliver(logged)
        return ScenarioResult(originalTransactionId: subscription.originalTransactionId,
                              transactionId: event.transaction.transactionId, status: subscription.status,
                              notification: logged.record(delivery))
    }

    /// Sends the most recent notification again, unchanged (same UUID, same `signedDate`), `times` times in a
    /// row: what Apple's retries and duplicate deliveries look like.
    func resendLast(times: Int) async throws -> [NotificationRecord] {
        guard (1...100).contains(times) else {
            throw SimulatorError(.invalidArgument, "resend 1...100 times, not \(times)")
        }
        guard let last = state.withLock({ $0.notifications.last }) else {
            throw SimulatorError(.nothingToResend, "no notification has been signed yet")
        }
        var records: [NotificationRecord] = []
        for _ in 0..<times { records.append(last.record(await deliver(last))) }
        return records
    }

    private func deliver(_ notification: LoggedNotification) async -> NotificationDelivery {
        let delivery = faults.takeDrop() ? NotificationDelivery.dropped : await sender.deliver(notification.signedPayload)
        state.withLock { $0.recordAttempt(notification.notificationUUID, delivery) }
        return delivery
    }
}
