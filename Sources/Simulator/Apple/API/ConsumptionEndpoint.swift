import Foundation
import HTTP

/// A Send Consumption Information request the simulator accepted, for tests to inspect.
public struct ConsumptionRecord: Sendable, Equatable, Codable {
    public let transactionId: String
    public let originalTransactionId: String
    /// The request body exactly as received (UTF-8 JSON).
    public let body: String
    public let deliveryStatus: String
    public let sampleContentProvided: Bool
    public let refundPreference: String?
    /// Milliseconds since 1970 on the simulated clock.
    public let receivedAt: Int64
}

/// Send Consumption Information (v2): validated as Apple documents it, answered 202 and recorded.
extension SimulatorCore {
    static let deliveryStatuses: Set<String> = ["DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM",
                                                "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]
    static let refundPreferences: Set<String> = ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]

    func consumption(_ request: HTTPRequest, app: SimulatedApp) throws -> HTTPResponse {
        let id = try transactionID(in: request, after: Self.consumptionPrefix)
        let (transaction, now) = try state.withLock { state in
            let subscription = try lineage(of: id, app: app, in: state)
            return (try state.transaction(id, of: subscription), state.now)
        }
        guard transaction.inAppOwnershipType == .purchased else { throw AppleAPIError.familyTransactionNotSupported }
        // A body that is not a JSON object is malformed: Apple answers 400 without an error code.
        guard let fields = try? JSONDecoder().decode([String: JSONValue].self, from: request.body) else {
            return HTTPResponse(status: 400)
        }
        guard fields["customerConsented"] == .bool(true) else { throw AppleAPIError.invalidCustomerConsented }
        guard case .string(let deliveryStatus)? = fields["deliveryStatus"], Self.deliveryStatuses.contains(deliveryStatus) else {
            throw AppleAPIError.invalidDeliveryStatus
        }
        guard case .bool(let sampleContentProvided)? = fields["sampleContentProvided"] else {
            throw AppleAPIError.invalidSampleContentProvided
        }
        var refundPreference: String?
        if let value = fields["refundPreference"], !value.isNull {
            guard case .string(let text) = value, Self.refundPreferences.contains(text) else {
                throw AppleAPIError.invalidRefundPreference
            }
            refundPreference = text
        }
        // Apple computes the share of an auto-renewable subscription from elapsed time and refuses one given.
        if let value = fields["consumptionPercentage"], !value.isNull {
            throw AppleAPIError.consumptionPercentageAutoRenewableSubscription
        }
        let record = ConsumptionRecord(transactionId: id, originalTransactionId: transaction.originalTransactionId,
                                       body: String(decoding: request.body, as: UTF8.self), deliveryStatus: deliveryStatus,
                                       sampleContentProvided: sampleContentProvided, refundPreference: refundPreference,
                                       receivedAt: now.milliseconds)
        state.withLock { $0.consumptionRequests.append(record) }
        return HTTPResponse(status: 202)
    }
}
