import StoreModel

/// Google's JSON for the simulator's resources, field by field with Google's names. Like Google's servers
/// (proto3 JSON), fields with their default value — `false`, `0`, empty — are left out, so an absent
/// `autoRenewEnabled` means false and a zero `Money` is just `{"currencyCode": …}`; int64 values are strings.
enum PlayJSON {
    /// RFC 3339 in UTC: whole seconds, or three fractional digits when there are milliseconds
    /// (`2026-11-29T12:00:00Z`, `2026-11-29T12:00:00.123Z`), as Google writes timestamps.
    static func time(_ milliseconds: Int64) -> String {
        let seconds = milliseconds.floorDivided(by: 1000)
        let fraction = milliseconds - seconds * 1000
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if fraction != 0 { text += "." + pad(fraction, 3) }
        return text + "Z"
    }

    /// Howard Hinnant's days-to-civil algorithm: exact for every day, no calendar object involved.
    private static func civilDate(daysSinceEpoch days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Google's `Money` for `minorUnits` of `currency`: `units` (a string) and `nanos`, exact.
    static func money(_ minorUnits: Int64, _ currency: String) -> [String: Any] {
        let digits = Money.exponent(of: currency)
        let scale = (0..<digits).reduce(Int64(1)) { value, _ in value * 10 }
        let units = minorUnits / scale
        let nanos = (minorUnits % scale) * (1_000_000_000 / scale)
        var body: [String: Any] = ["currencyCode": currency]
        if units != 0 { body["units"] = String(units) }
        if nanos != 0 { body["nanos"] = nanos }
        return body
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

extension SimulatedPlaySubscription {
    /// `SubscriptionPurchaseV2`.
    var resource: [String: Any] {
        var autoRenewingPlan: [String: Any] = ["recurringPrice": PlayJSON.money(price, currency)]
        if autoRenewEnabled { autoRenewingPlan["autoRenewEnabled"] = true }
        var offerDetails: [String: Any] = ["basePlanId": basePlanId]
        offerDetails["offerId"] = offerId
        var lineItem: [String: Any] = [
            "productId": productId, "expiryTime": PlayJSON.time(expiryTime), "autoRenewingPlan": autoRenewingPlan,
            "offerDetails": offerDetails,
        ]
        lineItem["latestSuccessfulOrderId"] = latestSuccessfulOrderId
        if let replacement {
            lineItem["itemReplacement"] = ["productId": replacement.productId, "basePlanId": replacement.basePlanId,
                                           "replacementMode": replacement.mode]
        }
        var body: [String: Any] = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "startTime": PlayJSON.time(startTime), "regionCode": regionCode,
            "subscriptionState": state.rawValue, "lineItems": [lineItem],
            "acknowledgementState": acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING",
        ]
        body["linkedPurchaseToken"] = linkedPurchaseToken
        if testPurchase { body["testPurchase"] = [String: Any]() }
        if obfuscatedAccountId != nil || obfuscatedProfileId != nil {
            var identifiers: [String: Any] = [:]
            identifiers["obfuscatedExternalAccountId"] = obfuscatedAccountId
            identifiers["obfuscatedExternalProfileId"] = obfuscatedProfileId
            body["externalAccountIdentifiers"] = identifiers
        }
        if state == .paused, let autoResumeTime {
            body["pausedStateContext"] = ["autoResumeTime": PlayJSON.time(autoResumeTime)]
        }
        if state == .canceled || state == .expired, let cancellation {
            body["canceledStateContext"] = Self.context(cancellation)
        }
        return body
    }

    private static func context(_ cancellation: PlayCancellation) -> [String: Any] {
        switch cancellation {
        case .user(let cancelTime):
            ["userInitiatedCancellation": ["cancelTime": PlayJSON.time(cancelTime),
                                           "cancelSurveyResult": ["reason": "CANCEL_SURVEY_REASON_OTHERS"]]]
        case .system: ["systemInitiatedCancellation": [String: Any]()]
        case .developer: ["developerInitiatedCancellation": [String: Any]()]
        case .replacement: ["replacementCancellation": [String: Any]()]
        }
    }
}

extension SimulatedPlayOrder {
    /// `Order`. Google keeps 15 % of the pre-tax amount in the simulator's `developerRevenueInBuyerCurrency`.
    var resource: [String: Any] {
        var subscriptionDetails: [String: Any] = [
            "basePlanId": basePlanId, "offerPhaseDetails": ["baseDetails": [String: Any]()],
            "servicePeriodStartTime": PlayJSON.time(servicePeriodStart), "servicePeriodEndTime": PlayJSON.time(servicePeriodEnd),
        ]
        subscriptionDetails["offerId"] = offerId
        let lineItem: [String: Any] = [
            "productId": productId, "productTitle": productId, "listingPrice": PlayJSON.money(total, currency),
            "total": PlayJSON.money(total, currency), "tax": PlayJSON.money(tax, currency),
            "subscriptionDetails": subscriptionDetails,
        ]
        let refunded = refunds.reduce(Int64(0)) { $0 + $1.total } - refunds.reduce(Int64(0)) { $0 + $1.tax }
        var history: [String: Any] = ["processedEvent": ["eventTime": PlayJSON.time(createTime)]]
        let partial = refunds.filter(\.partial)
        if !partial.isEmpty {
            history["partialRefundEvents"] = partial.map { refund -> [String: Any] in
                ["createTime": PlayJSON.time(refund.time), "processTime": PlayJSON.time(refund.time),
                 "state": "PROCESSED_SUCCESSFULLY", "refundDetails": details(refund)]
            }
        }
        if let full = refunds.last(where: { !$0.partial }) {
            history["refundEvent"] = ["eventTime": PlayJSON.time(full.time), "refundDetails": details(full),
                                      "refundReason": "OTHER"] as [String: Any]
        }
        return [
            "orderId": orderId, "purchaseToken": purchaseToken, "state": state.rawValue, "createTime": PlayJSON.time(createTime),
            "lastEventTime": PlayJSON.time(lastEventTime), "total": PlayJSON.money(total, currency),
            "tax": PlayJSON.money(tax, currency),
            "developerRevenueInBuyerCurrency": PlayJSON.money((total - tax - refunded) * 85 / 100, currency),
            "buyerAddress": ["buyerCountry": regionCode], "orderDetails": ["taxInclusive": true], "salesChannel": "IN_APP",
            "lineItems": [lineItem], "orderHistory": history,
        ]
    }

    private func details(_ refund: Refund) -> [String: Any] {
        ["total": PlayJSON.money(refund.total, currency), "tax": PlayJSON.money(refund.tax, currency)]
    }
}

extension VoidedPurchaseRecord {
    /// `VoidedPurchase` (google.md §3.4): int64 millis as strings, source and reason as numbers, always present;
    /// `voidedQuantity` only for a quantity-based partial refund.
    var resource: [String: Any] {
        var body: [String: Any] = [
            "kind": "androidpublisher#voidedPurchase", "purchaseToken": purchaseToken, "orderId": orderId,
            "purchaseTimeMillis": String(purchaseTime), "voidedTimeMillis": String(voidedTime),
            "voidedSource": source.rawValue, "voidedReason": reason.rawValue,
        ]
        if refundType == 2 { body["voidedQuantity"] = 1 }
        return body
    }
}
