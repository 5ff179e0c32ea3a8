import AppStore
import Foundation
import TestPKI

/// Signs what the simulated App Store hands out — transactions, renewal info, notifications — with the
/// simulator's Apple-shaped PKI, each with the `signedDate` it is signed at.
struct PayloadSigner: Sendable {
    let pki: LocalApplePKI

    func transaction(_ transaction: SimulatedTransaction, signedDate: Date) throws -> String {
        try pki.sign(JSONBody.encode(transaction.payload(signedDate: signedDate)))
    }

    func renewalInfo(_ renewal: SimulatedRenewalInfo, signedDate: Date) throws -> String {
        try pki.sign(JSONBody.encode(renewal.payload(signedDate: signedDate)))
    }

    /// The `signedPayload` of the notification `event` describes, with nested signed transaction and renewal
    /// info and the subscription's status as of the event.
    func notification(_ event: ScenarioEvent, uuid: String) throws -> String {
        var data: [String: Any] = [
            "environment": event.app.environment.rawValue, "bundleId": event.app.bundleID,
            "bundleVersion": event.app.bundleVersion,
            "signedTransactionInfo": try transaction(event.transaction, signedDate: event.signedDate),
            "signedRenewalInfo": try renewalInfo(event.subscription.renewalInfo, signedDate: event.signedDate),
            "status": event.subscription.status.rawValue,
        ]
        data["appAppleId"] = event.app.appAppleID
        data["consumptionRequestReason"] = event.consumptionRequestReason?.rawValue
        var body: [String: Any] = [
            "notificationType": event.notificationType, "notificationUUID": uuid, "version": "2.0",
            "signedDate": event.signedDate.milliseconds, "data": data,
        ]
        body["subtype"] = event.subtype
        return try pki.sign(JSONBody.encode(body))
    }
}
