import Foundation

/// A notification the simulator signed, kept for Get Notification History and for sending it again.
struct LoggedNotification: Sendable {
    struct Attempt: Sendable {
        let date: Date
        /// Apple's `sendAttemptResult`.
        let result: String
    }

    let notificationUUID: String
    let notificationType: String
    let subtype: String?
    let signedDate: Date
    let signedPayload: String
    let bundleId: String
    let originalTransactionId: String
    var attempts: [Attempt] = []

    func record(_ delivery: NotificationDelivery) -> NotificationRecord {
        NotificationRecord(notificationUUID: notificationUUID, notificationType: notificationType, subtype: subtype,
                           signedDate: signedDate.milliseconds, signedPayload: signedPayload, delivery: delivery)
    }
}

extension StoreState {
    mutating func log(_ notification: LoggedNotification) {
        notifications.append(notification)
    }

    /// Notes one delivery attempt of notification `uuid` (nothing is noted when no target is configured).
    mutating func recordAttempt(_ uuid: String, _ delivery: NotificationDelivery) {
        guard let result = delivery.sendAttemptResult,
              let index = notifications.lastIndex(where: { $0.notificationUUID == uuid }) else { return }
        notifications[index].attempts.append(.init(date: now, result: result))
    }
}
