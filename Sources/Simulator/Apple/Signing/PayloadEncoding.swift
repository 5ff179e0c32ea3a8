import Foundation

/// The JSON objects Apple signs, built field by field with Apple's names; absent values are left out, as
/// Apple leaves them out. Dates are milliseconds since 1970.
extension SimulatedTransaction {
    func payload(signedDate: Date) -> [String: Any] {
        var body: [String: Any] = [
            "transactionId": transactionId, "originalTransactionId": originalTransactionId,
            "webOrderLineItemId": webOrderLineItemId, "bundleId": bundleId, "productId": productId,
            "subscriptionGroupIdentifier": subscriptionGroupIdentifier, "purchaseDate": purchaseDate.milliseconds,
            "originalPurchaseDate": originalPurchaseDate.milliseconds, "expiresDate": expiresDate.milliseconds,
            "quantity": 1, "type": Self.type, "inAppOwnershipType": inAppOwnershipType.rawValue,
            "signedDate": signedDate.milliseconds, "environment": environment.rawValue,
            "transactionReason": transactionReason.rawValue, "storefront": storefront, "storefrontId": storefrontId,
            "price": price, "currency": currency,
        ]
        body["appAccountToken"] = appAccountToken.map { $0.uuidString.lowercased() }
        if let offer {
            body["offerType"] = offer.type
            body["offerDiscountType"] = offer.discountType
        }
        if isUpgraded { body["isUpgraded"] = true }
        if let revocation {
            body["revocationDate"] = revocation.date.milliseconds
            body["revocationType"] = revocation.kind.rawValue
            body["revocationPercentage"] = revocation.percentage
            body["revocationReason"] = revocation.reason
        }
        return body
    }
}

extension SimulatedRenewalInfo {
    func payload(signedDate: Date) -> [String: Any] {
        var body: [String: Any] = [
            "originalTransactionId": originalTransactionId, "productId": productId,
            "autoRenewProductId": autoRenewProductId, "autoRenewStatus": autoRenewStatus ? 1 : 0,
            "isInBillingRetryPeriod": isInBillingRetryPeriod, "renewalDate": renewalDate.milliseconds,
            "recentSubscriptionStartDate": recentSubscriptionStartDate.milliseconds, "renewalPrice": renewalPrice,
            "currency": currency, "signedDate": signedDate.milliseconds, "environment": environment.rawValue,
        ]
        body["expirationIntent"] = expirationIntent
        body["gracePeriodExpiresDate"] = gracePeriodExpiresDate?.milliseconds
        body["appAccountToken"] = appAccountToken.map { $0.uuidString.lowercased() }
        return body
    }
}
