import Foundation
import StrictJSON

/// A payload `SignedDataVerifier` decodes from a token: read from its JSON with `JSONReader` (every known field
/// checked for its type, unknown fields skipped), carrying the `signedDate` the chain is validated at.
///
/// The payload types keep optional fields as `internal(set) var` so that a reader can fill them one by one
/// as their keys come, in whatever order the document has them. Not a `JSONReadable`: these types are public,
/// and conforming to that public protocol would make their readers part of the module's API.
protocol SignedPayload {
    init(json reader: inout JSONReader) throws
    var signedDate: Date? { get }
}

extension JSONReader {
    /// Apple's dates: integer milliseconds since 1970, or nil for `null`.
    mutating func readDate() throws -> Date? {
        try readInt64().map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    /// An environment name, unknown ones kept verbatim, or nil for `null`.
    mutating func readEnvironment() throws -> AppStoreEnvironment? {
        try readString().map(AppStoreEnvironment.init(rawValue:))
    }
}

extension NotificationPayload: SignedPayload {
    init(json reader: inout JSONReader) throws {
        var notificationType: String?, subtype: String?, notificationUUID: String?, version: String?, signedDate: Date?
        var data: NotificationData?, summary: Summary?, externalPurchaseToken: ExternalPurchaseToken?, appData: AppData?
        try reader.readObject { reader, key in
            switch key {
            case "notificationType": notificationType = try reader.readString()
            case "subtype": subtype = try reader.readString()
            case "notificationUUID": notificationUUID = try reader.readString()
            case "version": version = try reader.readString()
            case "signedDate": signedDate = try reader.readDate()
            case "data": data = try reader.readOptional(NotificationData.init(json:))
            case "summary": summary = try reader.readOptional(Summary.init(json:))
            case "externalPurchaseToken": externalPurchaseToken = try reader.readOptional(ExternalPurchaseToken.init(json:))
            case "appData": appData = try reader.readOptional(AppData.init(json:))
            default: try reader.skipValue()
            }
        }
        guard let notificationType else { throw Self.missing("notificationType") }
        guard let notificationUUID else { throw Self.missing("notificationUUID") }
        self.init(notificationType: notificationType, subtype: subtype, notificationUUID: notificationUUID, version: version,
                  signedDate: signedDate, data: data, summary: summary, externalPurchaseToken: externalPurchaseToken,
                  appData: appData)
    }

    private static func missing(_ field: String) -> JSONReaderError {
        JSONReaderError(.missingField, "required field", offset: 0, path: [field])
    }
}

extension NotificationPayload.NotificationData {
    init(json reader: inout JSONReader) throws {
        self.init()
        try reader.readObject { reader, key in
            switch key {
            case "environment": environment = try reader.readEnvironment()
            case "appAppleId": appAppleId = try reader.readInt64()
            case "bundleId": bundleId = try reader.readString()
            case "bundleVersion": bundleVersion = try reader.readString()
            case "signedTransactionInfo": signedTransactionInfo = try reader.readString()
            case "signedRenewalInfo": signedRenewalInfo = try reader.readString()
            case "status": status = try reader.readInt()
            case "consumptionRequestReason": consumptionRequestReason = try reader.readString()
            default: try reader.skipValue()
            }
        }
    }
}

extension NotificationPayload.Summary {
    init(json reader: inout JSONReader) throws {
        self.init()
        try reader.readObject { reader, key in
            switch key {
            case "environment": environment = try reader.readEnvironment()
            case "appAppleId": appAppleId = try reader.readInt64()
            case "bundleId": bundleId = try reader.readString()
            case "productId": productId = try reader.readString()
            case "requestIdentifier": requestIdentifier = try reader.readString()
            case "succeededCount": succeededCount = try reader.readInt64()
            case "failedCount": failedCount = try reader.readInt64()
            default: try reader.skipValue()
            }
        }
    }
}

extension NotificationPayload.ExternalPurchaseToken {
    init(json reader: inout JSONReader) throws {
        self.init()
        try reader.readObject { reader, key in
            switch key {
            case "externalPurchaseId": externalPurchaseId = try reader.readString()
            case "tokenCreationDate": tokenCreationDate = try reader.readDate()
            case "appAppleId": appAppleId = try reader.readInt64()
            case "bundleId": bundleId = try reader.readString()
            default: try reader.skipValue()
            }
        }
    }
}

extension NotificationPayload.AppData {
    init(json reader: inout JSONReader) throws {
        self.init()
        try reader.readObject { reader, key in
            switch key {
            case "appAppleId": appAppleId = try reader.readInt64()
            case "bundleId": bundleId = try reader.readString()
            case "environment": environment = try reader.readEnvironment()
            case "signedAppTransactionInfo": signedAppTransactionInfo = try reader.readString()
            default: try reader.skipValue()
            }
        }
    }
}

extension TransactionPayload: SignedPayload {
    init(json reader: inout JSONReader) throws {
        self.init()
        try reader.readObject { reader, key in
            switch key {
            case "transactionId": transactionId = try reader.readString()
            case "originalTransactionId": originalTransactionId = try reader.readString()
            case "webOrderLineItemId": webOrderLineItemId = try reader.readString()
            case "bundleId": bundleId = try reader.readString()
            case "productId": productId = try reader.readString()
            case "subscriptionGroupIdentifier": subscriptionGroupIdentifier = try reader.readString()
            case "purchaseDate": purchaseDate = try reader.readDate()
            case "originalPurchaseDate": originalPurchaseDate = try reader.readDate()
            case "expiresDate": expiresDate = try reader.readDate()
            case "quantity": quantity = try reader.readInt()
            case "type": type = try reader.readString()
            case "appAccountToken": appAccountToken = try reader.readString()
            case "inAppOwnershipType": inAppOwnershipType = try reader.readString()
            case "signedDate": signedDate = try reader.readDate()
            case "revocationReason": revocationReason = try reader.readInt()
            case "revocationDate": revocationDate = try reader.readDate()
            case "revocationType": revocationType = try reader.readString()
            case "revocationPercentage": revocationPercentage = try reader.readInt()
            case "isUpgraded": isUpgraded = try reader.readBool()
            case "offerType": offerType = try reader.readInt()
            case "offerIdentifier": offerIdentifier = try reader.readString()
            case "offerDiscountType": offerDiscountType = try reader.readString()
            case "offerPeriod": offerPeriod = try reader.readString()
            case "environment": environment = try reader.readEnvironment()
            case "storefront": storefront = try reader.readString()
            case "storefrontId": storefrontId = try reader.readString()
            case "transactionReason": transactionReason = try reader.readString()
            case "price": price = try reader.readInt64()
            case "currency": currency = try reader.readString()
            case "appTransactionId": appTransactionId = try reader.readString()
            default: try reader.skipValue()
            }
        }
    }
}

extension RenewalInfoPayload: SignedPayload {
    init(json reader: inout JSONReader) throws {
        self.init()
        try reader.readObject { reader, key in
            switch key {
            case "originalTransactionId": originalTransactionId = try reader.readString()
            case "productId": productId = try reader.readString()
            case "autoRenewProductId": autoRenewProductId = try reader.readString()
            case "autoRenewStatus": autoRenewStatus = try reader.readInt()
            case "expirationIntent": expirationIntent = try reader.readInt()
            case "isInBillingRetryPeriod": isInBillingRetryPeriod = try reader.readBool()
            case "gracePeriodExpiresDate": gracePeriodExpiresDate = try reader.readDate()
            case "priceIncreaseStatus": priceIncreaseStatus = try reader.readInt()
            case "renewalDate": renewalDate = try reader.readDate()
            case "recentSubscriptionStartDate": recentSubscriptionStartDate = try reader.readDate()
            case "signedDate": signedDate = try reader.readDate()
            case "renewalPrice": renewalPrice = try reader.readInt64()
            case "currency": currency = try reader.readString()
            case "offerType": offerType = try reader.readInt()
            case "offerIdentifier": offerIdentifier = try reader.readString()
            case "offerDiscountType": offerDiscountType = try reader.readString()
            case "appAccountToken": appAccountToken = try reader.readString()
            case "environment": environment = try reader.readEnvironment()
            default: try reader.skipValue()
            }
        }
    }
}
