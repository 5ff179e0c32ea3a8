import Crypto
import Foundation
import HTTP

/// Get Notification History: the notifications signed for the app between `startDate` and `endDate`
/// (simulated clock; the end excluded), filtered by type and subtype or by a transaction's lineage, optionally only those
/// never delivered, 20 per page with a `paginationToken`.
extension SimulatorCore {
    static let notificationTypes: Set<String> = [
        "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW", "EXPIRED",
        "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED", "CONSUMPTION_REQUEST",
        "RENEWAL_EXTENDED", "REVOKE", "TEST", "RENEWAL_EXTENSION", "REFUND_REVERSED", "EXTERNAL_PURCHASE_TOKEN",
        "ONE_TIME_CHARGE", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE",
    ]
    static let notificationSubtypes: Set<String> = [
        "INITIAL_BUY", "RESUBSCRIBE", "DOWNGRADE", "UPGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", "VOLUNTARY",
        "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "PENDING", "ACCEPTED", "BILLING_RECOVERY",
        "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED", "CREATED", "ACTIVE_TOKEN_REMINDER",
    ]
    static let notificationHistoryPageSize = 20

    private struct NotificationHistoryRequest {
        let start: Int64
        let end: Int64
        let type: String?
        let subtype: String?
        let transactionId: String?
        let onlyFailures: Bool

        var fingerprint: String {
            QueryFingerprint.of([String(start), String(end), type ?? "", subtype ?? "", transactionId ?? "", String(onlyFailures)])
        }
    }

    func notificationHistory(_ request: HTTPRequest, app: SimulatedApp) throws -> HTTPResponse {
        guard let fields = try? JSONDecoder().decode([String: JSONValue].self, from: request.body) else {
            return HTTPResponse(status: 400)
        }
        let now = state.withLock { $0.now }
        let filter = try Self.notificationFilter(fields, app: app, now: now)
        guard let query = QueryItems(request.query) else { throw AppleAPIError.generalBadRequest }
        let offset = try Self.offset(of: try query.single("paginationToken", or: .invalidPaginationToken), filter.fingerprint)
        let matching = state.withLock { state -> [LoggedNotification] in
            let lineage = filter.transactionId.flatMap { state.lineage(containing: $0)?.originalTransactionId }
            if filter.transactionId != nil && lineage == nil { return [] }
            return state.notifications.filter { notification in
                let signed = notification.signedDate.milliseconds
                return notification.bundleId == app.bundleID && signed >= filter.start && signed < filter.end
                    && (filter.type.map { $0 == notification.notificationType } ?? true)
                    && (filter.subtype.map { $0 == notification.subtype } ?? true)
                    && (lineage.map { $0 == notification.originalTransactionId } ?? true)
                    && (!filter.onlyFailures || !notification.attempts.contains { $0.result == "SUCCESS" })
            }
        }
        let page = matching.dropFirst(offset).prefix(Self.notificationHistoryPageSize)
        let hasMore = matching.count > offset + page.count
        var body: [String: Any] = [
            "hasMore": hasMore,
            "notificationHistory": page.map { notification -> [String: Any] in
                ["signedPayload": notification.signedPayload,
                 "sendAttempts": notification.attempts.map {
                     ["attemptDate": $0.date.milliseconds, "sendAttemptResult": $0.result] as [String: Any]
                 }]
            },
        ]
        if hasMore {
            body["paginationToken"] = Base64URL.encode(Data("n1:\(offset + page.count):\(filter.fingerprint)".utf8))
        }
        return .json(200, try JSONBody.string(body))
    }

    private static func notificationFilter(_ fields: [String: JSONValue], app: SimulatedApp,
                                           now: Date) throws(AppleAPIError) -> NotificationHistoryRequest {
        guard case .integer(let start)? = fields["startDate"], start >= 0 else { throw .invalidStartDate }
        guard case .integer(let end)? = fields["endDate"], end >= 0 else { throw .invalidEndDate }
        guard start < end else { throw .startDateAfterEndDate }
        let retentionDays: Int64 = app.environment == .production ? 180 : 30
        guard start >= now.milliseconds - retentionDays * 86_400_000 else { throw .startDateTooFarInPast }
        let type = try optionalString(fields["notificationType"], allowed: notificationTypes, else: .invalidNotificationType)
        let subtype = try optionalString(fields["notificationSubtype"], allowed: notificationSubtypes, else: .invalidNotificationType)
        var transactionId: String?
        if let value = fields["transactionId"], !value.isNull {
            guard case .string(let id) = value, (1...20).contains(id.utf8.count), id.utf8.allSatisfy({ (48...57).contains($0) }) else {
                throw .invalidTransactionId
            }
            guard type == nil, subtype == nil else { throw .multipleFiltersSupplied }
            transactionId = id
        }
        var onlyFailures = false
        if let value = fields["onlyFailures"], !value.isNull {
            guard case .bool(let flag) = value else { throw .generalBadRequest }
            onlyFailures = flag
        }
        return NotificationHistoryRequest(start: start, end: end, type: type, subtype: subtype,
                                          transactionId: transactionId, onlyFailures: onlyFailures)
    }

    private static func optionalString(_ value: JSONValue?, allowed: Set<String>,
                                       else error: AppleAPIError) throws(AppleAPIError) -> String? {
        guard let value, !value.isNull else { return nil }
        guard case .string(let text) = value, allowed.contains(text) else { throw error }
        return text
    }

    /// Where the page a `paginationToken` asks for starts; a token from another query is refused.
    private static func offset(of token: String?, _ fingerprint: String) throws(AppleAPIError) -> Int {
        guard let token else { return 0 }
        guard token.utf8.count <= 256, let data = try? Base64URL.decode(token) else { throw .invalidPaginationToken }
        let fields = String(decoding: data, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0] == "n1", fields[2] == fingerprint, let offset = Int(fields[1]), offset >= 0 else {
            throw .invalidPaginationToken
        }
        return offset
    }
}
