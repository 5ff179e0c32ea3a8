import HTTP
import Logging

/// An App Store Server API error answer: HTTP status plus Apple's body `{"errorCode", "errorMessage"}`.
struct AppleAPIError: Error, Sendable {
    let status: Int
    let code: Int64
    let message: String

    var response: HTTPResponse {
        .json(status, "{\"errorCode\":\(code),\"errorMessage\":\(JSON.quoted(message))}")
    }

    static let generalBadRequest = AppleAPIError(status: 400, code: 4_000_000, message: "Bad request.")
    static let invalidRequestRevision = AppleAPIError(status: 400, code: 4_000_005, message: "Invalid request revision.")
    static let invalidTransactionId = AppleAPIError(status: 400, code: 4_000_006, message: "Invalid transaction id.")
    static let startDateTooFarInPast = AppleAPIError(status: 400, code: 4_000_012,
                                                     message: "Invalid request. The start date is earlier than the allowed start date.")
    static let startDateAfterEndDate = AppleAPIError(status: 400, code: 4_000_013,
                                                     message: "Invalid request. The end date precedes the start date or the dates are the same.")
    static let invalidPaginationToken = AppleAPIError(status: 400, code: 4_000_014,
                                                      message: "Invalid request. The pagination token is invalid.")
    static let invalidStartDate = AppleAPIError(status: 400, code: 4_000_015, message: "Invalid request. The start date is not a timestamp value in milliseconds.")
    static let invalidEndDate = AppleAPIError(status: 400, code: 4_000_016, message: "Invalid request. The end date is not a timestamp value in milliseconds.")
    static let invalidNotificationType = AppleAPIError(status: 400, code: 4_000_018,
                                                       message: "Invalid request. The notification type or subtype is invalid.")
    static let multipleFiltersSupplied = AppleAPIError(status: 400, code: 4_000_019,
                                                       message: "Invalid request. Supply either a transaction id or a notification type, but not both.")
    static let invalidSort = AppleAPIError(status: 400, code: 4_000_021, message: "Invalid request. The sort parameter is invalid.")
    static let invalidProductType = AppleAPIError(status: 400, code: 4_000_022,
                                                  message: "Invalid request. The product type parameter is invalid.")
    static let invalidProductId = AppleAPIError(status: 400, code: 4_000_023, message: "Invalid request. The product id parameter is invalid.")
    static let invalidSubscriptionGroupIdentifier = AppleAPIError(status: 400, code: 4_000_024,
                                                                  message: "Invalid request. The subscription group identifier parameter is invalid.")
    static let invalidInAppOwnershipType = AppleAPIError(status: 400, code: 4_000_026,
                                                         message: "Invalid request. The in-app ownership type parameter is invalid.")
    static let invalidRevoked = AppleAPIError(status: 400, code: 4_000_030, message: "Invalid request. The revoked parameter is invalid.")
    static let invalidStatus = AppleAPIError(status: 400, code: 4_000_031, message: "Invalid request. The status parameter is invalid.")
    static let invalidCustomerConsented = AppleAPIError(status: 400, code: 4_000_035,
                                                        message: "Invalid request. The customer consented field is required and must indicate the customer consented.")
    static let invalidDeliveryStatus = AppleAPIError(status: 400, code: 4_000_036,
                                                     message: "Invalid request. The delivery status field is invalid.")
    static let invalidSampleContentProvided = AppleAPIError(status: 400, code: 4_000_041,
                                                            message: "Invalid request. The sample content provided field is invalid.")
    static let invalidRefundPreference = AppleAPIError(status: 400, code: 4_000_044,
                                                       message: "Invalid request. The refund preference field is invalid.")
    static let familyTransactionNotSupported = AppleAPIError(status: 400, code: 4_000_185,
                                                             message: "Invalid request. Family Sharing transactions aren't supported by this endpoint.")
    static let consumptionPercentageAutoRenewableSubscription = AppleAPIError(
        status: 400, code: 4_000_209,
        message: "Invalid request. The consumption percentage field is not supported for auto-renewable subscription transactions.")
    static let transactionIdNotFound = AppleAPIError(status: 404, code: 4_040_010, message: "Transaction id not found.")
    static let rateLimitExceeded = AppleAPIError(status: 429, code: 4_290_000, message: "Rate limit exceeded.")
    static let generalInternal = AppleAPIError(status: 500, code: 5_000_000, message: "An unknown error occurred.")
}
