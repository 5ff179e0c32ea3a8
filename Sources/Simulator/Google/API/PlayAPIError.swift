import Foundation
import HTTP

/// A Google API error answer: `{"error": {"code", "message", "errors": [{"message", "domain", "reason"}],
/// "status"}}` with the reasons androidpublisher uses (google.md §5). `status` is the canonical gRPC name where
/// one exists for the HTTP code; androidpublisher's 410 answers carry none.
struct PlayAPIError: Error, Sendable {
    let code: Int
    let message: String
    let domain: String
    let reason: String
    let status: String?
    var location: (name: String, type: String)?
    var retryAfter: Int64?

    init(_ code: Int, _ message: String, domain: String = "androidpublisher", reason: String, status: String?,
         location: (name: String, type: String)? = nil) {
        self.code = code
        self.message = message
        self.domain = domain
        self.reason = reason
        self.status = status
        self.location = location
    }

    var response: HTTPResponse {
        var detail: [String: Any] = ["message": message, "domain": domain, "reason": reason]
        if let location {
            detail["location"] = location.name
            detail["locationType"] = location.type
        }
        var error: [String: Any] = ["code": code, "message": message, "errors": [detail]]
        error["status"] = status
        let body = (try? JSONBody.encode(["error": error])) ?? Data()
        var headers: [(name: String, value: String)] = [("content-type", "application/json; charset=UTF-8")]
        if let retryAfter { headers.append(("retry-after", String(retryAfter))) }
        if code == 401 { headers.append(("www-authenticate", "Bearer realm=\"https://accounts.google.com/\", error=\"invalid_token\"")) }
        return HTTPResponse(status: code, headers: headers, body: body)
    }

    static let unauthenticated = PlayAPIError(
        401, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        domain: "global", reason: "authError", status: "UNAUTHENTICATED", location: ("Authorization", "header"))
    static let permissionDenied = PlayAPIError(
        401, "The current user has insufficient permissions to perform the requested operation.", reason: "permissionDenied",
        status: "UNAUTHENTICATED")
    static let backendError = PlayAPIError(500, "Internal error encountered.", domain: "global", reason: "backendError",
                                           status: "INTERNAL")
    static func rateLimited(retryAfter: Int64) -> PlayAPIError {
        var error = PlayAPIError(429, "Rate Limit Exceeded", domain: "usageLimits", reason: "rateLimitExceeded",
                                 status: "RESOURCE_EXHAUSTED")
        error.retryAfter = retryAfter
        return error
    }
    static let notFound = PlayAPIError(404, "Not Found", domain: "global", reason: "notFound", status: "NOT_FOUND")
    static let applicationNotFound = PlayAPIError(404, "No application was found for the given package name.",
                                                  reason: "applicationNotFound", status: "NOT_FOUND",
                                                  location: ("packageName", "parameter"))
    static let purchaseTokenNotFound = PlayAPIError(404, "The purchase token was not found.", reason: "purchaseTokenNotFound",
                                                    status: "NOT_FOUND", location: ("token", "parameter"))
    static let purchaseTokenDoesNotMatchPackage = PlayAPIError(
        400, "The purchase token does not match the package name.", reason: "purchaseTokenDoesNotMatchPackageName",
        status: "INVALID_ARGUMENT", location: ("token", "parameter"))
    static let noLongerAvailable = PlayAPIError(
        410, "The subscription purchase is no longer available for query because it has been expired for too long.",
        reason: "subscriptionPurchaseNoLongerAvailable", status: nil)
    static let alreadyAcknowledged = PlayAPIError(400, "The subscription purchase is not owned by the user.",
                                                  reason: "productNotOwnedByUser", status: "INVALID_ARGUMENT")
    static let orderNotFound = PlayAPIError(404, "The order was not found.", reason: "orderNotFound", status: "NOT_FOUND",
                                            location: ("orderId", "parameter"))
    static func invalid(_ message: String, parameter: String) -> PlayAPIError {
        PlayAPIError(400, message, domain: "global", reason: "invalid", status: "INVALID_ARGUMENT",
                     location: (parameter, "parameter"))
    }
}
