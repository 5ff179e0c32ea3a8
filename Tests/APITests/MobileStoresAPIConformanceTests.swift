import Accounts
import Crypto
import Foundation
import StoreModel
import TestSupport
import Testing

/// The product reference `mobile-stores-api.txt`, walked top to bottom: one test per example, status, header,
/// "answers …" sentence and rule, each named after the sentence it checks and quoting it. Other suites of
/// `APITests` test most of these rules in depth; this one is the single walk through the reference, so a
/// sentence the server stops meeting fails here under its own name.
@Suite struct MobileStoresAPIConformanceTests {
    static let prefix = "/api/v1/mobile-stores"
    static let purchases = prefix + "/purchases"
    static let accountTokens = prefix + "/account-tokens"
    static let clientPurchases = prefix + "/client/purchases"
    static let clientEntitlements = prefix + "/client/entitlements"
    static let unauthenticated = #"{"message":"Unauthenticated."}"#
    static let invalidScope = #"{"message":"Invalid scope(s) provided."}"#
    static let invalidPair = #"{"status":false,"message":"Invalid account token or client secret"}"#
    static let cannotLink = #"{"status":false,"message":"This purchase cannot be linked to this account."}"#
    static let tooManyAttempts = #"{"message":"Too Many Attempts."}"#

    static func entitlementsPath(_ customer: String) -> String { prefix + "/customers/\(customer)/entitlements" }

    static func usagePath(_ customer: String, _ transactionID: String) -> String {
        prefix + "/customers/\(customer)/consumption-usage/\(transactionID)"
    }

    /// A backend's registration body for an App Store transaction.
    static func registerApple(_ customer: String, _ transactionID: String) -> String {
        #"{"customer_id":"\#(customer)","store":"apple","transaction_id":"\#(transactionID)"}"#
    }

    /// A backend's registration body for a Google Play purchase token.
    static func registerGoogle(_ customer: String, _ purchaseToken: String) -> String {
        #"{"customer_id":"\#(customer)","store":"google_play","purchase_token":"\#(purchaseToken)"}"#
    }

    /// An app's report body for an App Store transaction.
    static func reportApple(_ transactionID: String) -> String {
        #"{"store":"apple","transaction_id":"\#(transactionID)"}"#
    }

    /// An app's report body for a Google Play purchase token.
    static func reportGoogle(_ purchaseToken: String) -> String {
        #"{"store":"google_play","purchase_token":"\#(purchaseToken)"}"#
    }

    /// The answer's `entitlements`.
    static func entitlements(_ answer: APIHarness.Answer) throws -> [[String: Any]] {
        try #require(try answer.json["entitlements"] as? [[String: Any]], "\(answer.text)")
    }

    /// Two JSON values compared as data, keys sorted.
    static func canonical(_ value: Any?) throws -> Data {
        try JSONSerialization.data(withJSONObject: try #require(value), options: [.sortedKeys, .fragmentsAllowed])
    }

    /// An API client of the account holding only `scopes`, and a token of it.
    static func tokenOfAClient(_ api: APIHarness, scopes: [String]) async throws -> String {
        let accountID = api.accountID
        let created = try await api.database.pool.transaction { db in
            try APIClients.add(accountID: accountID, name: "other", scopes: scopes, sha256: { Digest.sha256($0) }, on: db)
        }
        let issued = try await api.requestToken([("grant_type", "client_credentials"), ("client_id", created.client.id),
                                                 ("client_secret", created.secret)])
        return try #require(try issued.json["access_token"] as? String, "\(issued.text)")
    }

    // MARK: Getting started

    /// "SubscriptionFlow never trusts the request for product or price: every purchase is re-fetched from Apple or
    /// Google, and the store's answer decides product, amount, currency, status and expiry."
    @Test func theStoresAnswerDecidesProductAmountCurrencyStatusAndExpiry() async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let bought = try await api.apple.subscribe(productId: "pro.monthly", price: 12_490, currency: "EUR", silent: true)
            let answer = try await api.send("POST", Self.purchases, json: """
                {"customer_id":"\(customer)","store":"apple","transaction_id":"\(bought.transactionId)",\
                "product_id":"basic.yearly","amount":"0.01","price":1,"currency":"JPY","status":"active",\
                "expires_at":"2099-01-01T00:00:00Z"}
                """, bearer: try await api.accessToken())
            #expect(answer.status == 200, "\(answer.text)")
            let subscription = try #require(try answer.json["subscription"] as? [String: Any])
            #expect(subscription["plan"] as? String == "pro", "the store's product, mapped")
            #expect(subscription["store_state"] as? String == "active")
            #expect(subscription["expires_at"] as? String != "2099-01-01T00:00:00.000Z")
            let charge = try await api.database.pool.query(
                "SELECT store_product_id, amount_minor, currency FROM invoices WHERE store_transaction_id = $1",
                [bought.transactionId])
            try #require(charge.count == 1)
            #expect(try charge[0].decode(0, as: String.self) == "pro.monthly")
            #expect(try charge[0].decode(1, as: Int64.self) == 1_249, "the store's amount")
            #expect(try charge[0].decode(2, as: String.self) == "EUR", "the store's currency")
        }
    }

    // MARK: Requests and responses

    /// "Requests and responses are JSON (Content-Type: application/json). All endpoints answer JSON, including
    /// errors." — and "Every Mobile Stores endpoint answers JSON": every endpoint and every refusal, 404 and 405
    /// included.
    @Test func everyEndpointAndEveryErrorAnswersJSON() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let pair = try await api.customerWithPair()
            let customer = try await api.addCustomer()
            let narrow = try await Self.tokenOfAClient(api, scopes: ["read-reports"])
            let bought = try await api.buyOnAppStore()
            var answers: [(String, APIHarness.Answer)] = [
                ("token 200", try await api.requestToken([("grant_type", "client_credentials"), ("client_id", api.clientID),
                                                          ("client_secret", api.clientSecret)])),
                ("token 401", try await api.requestToken([("grant_type", "client_credentials"), ("client_id", api.clientID),
                                                          ("client_secret", "wrong")])),
                ("token 405", try await api.send("GET", "/oauth/token")),
                ("openapi", try await api.send("GET", Self.prefix + "/openapi.json")),
                ("issue 201", try await api.send("POST", Self.accountTokens, json: #"{"customer_id":"\#(customer)"}"#,
                                                 bearer: bearer)),
                ("issue 422", try await api.send("POST", Self.accountTokens, json: "{}", bearer: bearer)),
                ("revoke 200", try await api.send("DELETE", Self.accountTokens + "/" + pair.token, bearer: bearer)),
                ("revoke 404", try await api.send("DELETE", Self.accountTokens + "/" + UUID().uuidString, bearer: bearer)),
                ("register 200", try await api.send("POST", Self.purchases,
                                                    json: Self.registerApple(customer, bought.transactionId), bearer: bearer)),
                ("register 422", try await api.send("POST", Self.purchases, json: #"{"store":"apple"}"#, bearer: bearer)),
                ("register 409", try await api.send("POST", Self.purchases,
                                                    json: Self.registerApple(try await api.addCustomer(), bought.transactionId),
                                                    bearer: bearer)),
                ("entitlements 200", try await api.send("GET", Self.entitlementsPath(customer), bearer: bearer)),
                ("entitlements 404", try await api.send("GET", Self.entitlementsPath(UUID().uuidString), bearer: bearer)),
                ("usage PUT 404", try await api.send("PUT", Self.usagePath(customer, "2000000999999"), json: """
                    {"customer_consented":true,"delivery_status":"DELIVERED","sample_content_provided":false}
                    """, bearer: bearer)),
                ("usage GET 404", try await api.send("GET", Self.usagePath(customer, bought.transactionId), bearer: bearer)),
                ("401", try await api.send("GET", Self.entitlementsPath(customer))),
                ("403", try await api.send("GET", Self.entitlementsPath(customer), bearer: narrow)),
                ("unknown path 404", try await api.send("GET", Self.prefix + "/nope", bearer: bearer)),
                ("wrong method 405", try await api.send("PATCH", Self.purchases, bearer: bearer)),
                ("malformed 400", try await api.send("POST", Self.accountTokens, json: "{", bearer: bearer)),
                ("app 401", try await api.send("GET", Self.clientEntitlements)),
                ("app 422", try await api.sendAsApp("POST", Self.clientPurchases, json: "{}", pair: try await api.customerWithPair())),
                ("app 409", try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple("2000000999999"),
                                                    pair: try await api.customerWithPair())),
                ("app entitlements 200", try await api.sendAsApp("GET", Self.clientEntitlements,
                                                                 pair: try await api.customerWithPair())),
            ]
            answers.append(("not JSON 415", try await ErrorShapeTests.raw(
                api, "POST", Self.accountTokens, headers: [("Content-Type", "text/plain"), ("Authorization", "Bearer \(bearer)")],
                body: Data(#"{"customer_id":"\#(customer)"}"#.utf8))))
            let app = try await api.customerWithPair()
            let report = try await api.buyOnAppStore()
            answers.append(("app purchases 200", try await api.sendAsApp("POST", Self.clientPurchases,
                                                                        json: Self.reportApple(report.transactionId), pair: app)))
            let statuses = answers.map(\.1.status)
            #expect(statuses == [200, 401, 405, 200, 201, 422, 200, 404, 200, 422, 409, 200, 404, 404, 404, 401, 403, 404,
                                 405, 400, 401, 422, 409, 200, 415, 200], "\(answers.map { "\($0.0): \($0.1.status)" })")
            for (name, answer) in answers {
                #expect(answer.header("content-type")?.hasPrefix("application/json") == true,
                        "\(name): \(answer.header("content-type") ?? "no Content-Type")")
                #expect((try? JSONSerialization.jsonObject(with: answer.body)) != nil, "\(name): \(answer.text)")
            }
        }
    }

    // MARK: Backend authentication

    /// The curl example: "POST 'https://demo.subscriptionflow.com/oauth/token' --header 'Content-Type:
    /// application/x-www-form-urlencoded' --data-urlencode 'client_id=…' 'client_secret=…'
    /// 'grant_type=client_credentials'", then "Send it as Authorization: Bearer <access_token>."
    @Test func theCurlTokenRequestIssuesABearerTokenForTheBackendEndpoints() async throws {
        try await APIHarness.with { api in
            let answer = try await api.requestToken([("client_id", api.clientID), ("client_secret", api.clientSecret),
                                                     ("grant_type", "client_credentials")])
            #expect(answer.status == 200, "\(answer.text)")
            let json = try answer.json
            #expect(json["token_type"] as? String == "Bearer")
            #expect((json["scope"] as? String)?.split(separator: " ").contains("access-global-api") == true,
                    "the client's token carries the access-global-api scope")
            let token = try #require(json["access_token"] as? String)
            let read = try await api.send("GET", Self.entitlementsPath(try await api.addCustomer()),
                                          headers: [("Authorization", "Bearer \(token)")])
            #expect(read.status == 200, "\(read.text)")
        }
    }

    /// "A missing, expired or invalid token answers 401 {"message": "Unauthenticated."}"
    @Test func aMissingExpiredOrInvalidTokenAnswers401Unauthenticated() async throws {
        try await APIHarness.with { api in
            let path = Self.entitlementsPath(try await api.addCustomer())
            let expired = try await api.accessToken()
            try await api.database.pool.query("UPDATE api_access_tokens SET expires_at = now() - interval '1 second'")
            let cases: [(String, [(name: String, value: String)])] = [
                ("missing", []),
                ("expired", [("Authorization", "Bearer \(expired)")]),
                ("invalid", [("Authorization", "Bearer not-a-token")]),
                ("not a bearer", [("Authorization", "Basic \(Data("\(api.clientID):\(api.clientSecret)".utf8).base64EncodedString())")]),
            ]
            for (name, headers) in cases {
                for (method, target, body) in [("GET", path, nil as String?),
                                               ("POST", Self.accountTokens, #"{"customer_id":"x"}"#)] {
                    let answer = try await api.send(method, target, json: body, headers: headers)
                    #expect(answer.status == 401, "\(name) \(method) \(target): \(answer.text)")
                    #expect(answer.text == Self.unauthenticated, "\(name) \(method) \(target)")
                }
            }
        }
    }

    /// "a token without the access-global-api scope answers 403 {"message": "Invalid scope(s) provided."}"
    @Test func aTokenWithoutTheGlobalScopeAnswers403InvalidScope() async throws {
        try await APIHarness.with { api in
            let token = try await Self.tokenOfAClient(api, scopes: ["read-reports"])
            let customer = try await api.addCustomer()
            for (method, path, body) in [("GET", Self.entitlementsPath(customer), nil as String?),
                                         ("POST", Self.accountTokens, #"{"customer_id":"\#(customer)"}"#),
                                         ("POST", Self.purchases, Self.registerApple(customer, "2000000000000001"))] {
                let answer = try await api.send(method, path, json: body, bearer: token)
                #expect(answer.status == 403, "\(method) \(path): \(answer.text)")
                #expect(answer.text == Self.invalidScope, "\(method) \(path)")
            }
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens", as: Int.self) == 0)
        }
    }

    // MARK: App authentication

    /// "App endpoints take no OAuth token." (and "Never ship these credentials in your app"): a backend's bearer
    /// token does not authenticate an app endpoint.
    @Test func appEndpointsTakeNoOAuthToken() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            for (method, path, body) in [("GET", Self.clientEntitlements, nil as String?),
                                         ("POST", Self.clientPurchases, Self.reportApple("2000000000000001"))] {
                let answer = try await api.send(method, path, json: body, bearer: bearer)
                #expect(answer.status == 401, "\(method) \(path): \(answer.text)")
                #expect(answer.text == Self.invalidPair)
            }
        }
    }

    /// "They authenticate with the pair your backend received from POST /mobile-stores/account-tokens:
    /// X-SF-Account-Token: … X-SF-Client-Secret: …"
    @Test func thePairFromTheAccountTokensEndpointAuthenticatesTheAppInTheXSFHeaders() async throws {
        try await APIHarness.with { api in
            let issued = try await api.send("POST", Self.accountTokens, json: #"{"customer_id":"\#(try await api.addCustomer())"}"#,
                                            bearer: try await api.accessToken())
            #expect(issued.status == 201, "\(issued.text)")
            let token = try #require(try issued.json["account_token"] as? String)
            let secret = try #require(try issued.json["client_secret"] as? String)
            let answer = try await api.send("GET", Self.clientEntitlements,
                                            headers: [("X-SF-Account-Token", token), ("X-SF-Client-Secret", secret)])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.text == #"{"entitlements":[]}"#)
        }
    }

    /// "The token must be active (not revoked) and the secret must match. Anything else, including a missing
    /// header, answers 401 {"status": false, "message": "Invalid account token or client secret"}."
    @Test func anythingButAnActiveTokenWithItsSecretAnswers401IncludingAMissingHeader() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let revoked = try await api.customerWithPair()
            _ = try await api.database.pool.transaction { db in try AccountTokens.revoke(token: revoked.token, on: db) }
            let cases: [(String, [(name: String, value: String)])] = [
                ("no headers", []),
                ("no secret header", [("X-SF-Account-Token", pair.token)]),
                ("no token header", [("X-SF-Client-Secret", pair.secret)]),
                ("a wrong secret", [("X-SF-Account-Token", pair.token), ("X-SF-Client-Secret", pair.secret + "x")]),
                ("an unknown token", [("X-SF-Account-Token", UUID().uuidString), ("X-SF-Client-Secret", pair.secret)]),
                ("a revoked token with its secret", revoked.headers),
            ]
            for (name, headers) in cases {
                for (method, path, body) in [("GET", Self.clientEntitlements, nil as String?),
                                             ("POST", Self.clientPurchases, Self.reportApple("2000000000000001"))] {
                    let answer = try await api.send(method, path, json: body, headers: headers)
                    #expect(answer.status == 401, "\(name), \(method) \(path): \(answer.text)")
                    #expect(answer.text == Self.invalidPair, "\(name), \(method) \(path)")
                }
            }
            #expect(try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair).status == 200)
        }
    }

    /// "The customer is always the token's customer: the app can never act for another customer."
    @Test func theCustomerIsAlwaysTheTokensCustomer() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let other = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore()
            let naming = try await api.sendAsApp("POST", Self.clientPurchases, json: """
                {"store":"apple","transaction_id":"\(bought.transactionId)","customer_id":"\(other.customerID)"}
                """, pair: pair)
            #expect(naming.status == 422, "a body naming a customer is refused: \(naming.text)")
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
            let answer = try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                                 pair: pair)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.json["customer_id"] == nil, "the app never learns a customer id")
            #expect(try await api.scalar("SELECT customer_id::text FROM store_purchases", as: String.self) == pair.customerID)
            let theirs = try await api.sendAsApp("GET", Self.clientEntitlements, pair: other)
            #expect(theirs.text == #"{"entitlements":[]}"#, "another token reads only its own customer")
            let mine = try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair)
            #expect(try Self.entitlements(mine).map { $0["key"] as? String } == ["pro"])
        }
    }

    // MARK: Account tokens

    /// "An account token is a SubscriptionFlow-issued UUID that stands for one customer. The app sets it on every
    /// store purchase (appAccountToken on iOS, obfuscatedExternalAccountId on Android), so purchases and
    /// notifications link to the right customer without exposing the customer ID."
    @Test func anAccountTokenIsAnIssuedUUIDThatLinksTaggedPurchasesToItsCustomer() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let issued = try await api.send("POST", Self.accountTokens, json: #"{"customer_id":"\#(customer)"}"#, bearer: bearer)
            let text = try #require(try issued.json["account_token"] as? String, "\(issued.text)")
            let token = try #require(UUID(uuidString: text))
            #expect(token.uuidString.lowercased() != customer, "the token is no customer id")
            let ios = try await api.buyOnAppStore(appAccountToken: token)
            #expect(try await api.mirrorAsANotificationWould(ios.originalTransactionId) == customer,
                    "a notification of a purchase tagged with appAccountToken links to the token's customer")
            let android = try await #require(api.play).purchase(
                productId: "pro.monthly", basePlanId: "monthly", price: 999, currency: "USD",
                obfuscatedAccountId: token.uuidString.lowercased(), silent: true)
            let purchaseToken = try #require(android.purchaseToken)
            let claimed = try await api.send("POST", Self.purchases,
                                             json: Self.registerGoogle(try await api.addCustomer(), purchaseToken), bearer: bearer)
            #expect(claimed.status == 409, "obfuscatedExternalAccountId names the token's customer: \(claimed.text)")
            let registered = try await api.send("POST", Self.purchases, json: Self.registerGoogle(customer, purchaseToken),
                                                bearer: bearer)
            #expect(registered.status == 200, "\(registered.text)")
        }
    }

    /// "Issue with POST /mobile-stores/account-tokens. The first call for a customer answers 201 with
    /// account_token and a client_secret. The secret is returned only once (SubscriptionFlow stores a SHA-256 hash
    /// of it)"
    @Test func theFirstIssueAnswers201WithATokenAndASecretStoredOnlyAsItsHash() async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let answer = try await api.send("POST", Self.accountTokens, json: #"{"customer_id":"\#(customer)"}"#,
                                            bearer: try await api.accessToken())
            #expect(answer.status == 201, "\(answer.text)")
            let json = try answer.json
            let token = try #require(json["account_token"] as? String)
            let secret = try #require(json["client_secret"] as? String)
            #expect(UUID(uuidString: token) != nil)
            #expect(!secret.isEmpty)
            #expect(try await api.scalar("SELECT secret_sha256 FROM account_tokens WHERE token = $1::uuid", [token],
                                         as: Data.self) == Digest.sha256(Data(secret.utf8)))
            #expect(try await api.scalar("SELECT customer_id::text FROM account_tokens WHERE token = $1::uuid", [token],
                                         as: String.self) == customer)
        }
    }

    /// "Reuse. Calling again while the customer has an active token answers 200 with the same account_token,
    /// client_secret: null and reused: true."
    @Test func reuseAnswers200WithTheSameTokenAndNoSecret() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let body = #"{"customer_id":"\#(try await api.addCustomer())"}"#
            let first = try await api.send("POST", Self.accountTokens, json: body, bearer: bearer)
            let again = try await api.send("POST", Self.accountTokens, json: body, bearer: bearer)
            #expect(again.status == 200, "\(again.text)")
            let json = try again.json
            #expect(json["account_token"] as? String == (try first.json["account_token"] as? String))
            #expect(json.keys.contains("client_secret") && json["client_secret"] is NSNull, "\(again.text)")
            #expect(json["reused"] as? Bool == true)
        }
    }

    /// "Rotate. Send "rotate": true to revoke every active token of the customer and get a new pair (201)."
    @Test func rotateRevokesEveryActiveTokenAndAnswers201WithANewPair() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let first = try await api.send("POST", Self.accountTokens, json: #"{"customer_id":"\#(customer)"}"#, bearer: bearer)
            let old = APIHarness.AppPair(customerID: customer, token: try #require(try first.json["account_token"] as? String),
                                         secret: try #require(try first.json["client_secret"] as? String))
            let rotated = try await api.send("POST", Self.accountTokens, json: #"{"customer_id":"\#(customer)","rotate":true}"#,
                                             bearer: bearer)
            #expect(rotated.status == 201, "\(rotated.text)")
            let new = APIHarness.AppPair(customerID: customer,
                                         token: try #require(try rotated.json["account_token"] as? String),
                                         secret: try #require(try rotated.json["client_secret"] as? String))
            #expect(new.token != old.token && new.secret != old.secret)
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens WHERE customer_id = $1::uuid AND status = 'active'",
                                         [customer], as: Int.self) == 1)
            #expect(try await api.scalar("SELECT status FROM account_tokens WHERE token = $1::uuid", [old.token],
                                         as: String.self) == "revoked")
            #expect(try await api.sendAsApp("GET", Self.clientEntitlements, pair: old).status == 401)
            #expect(try await api.sendAsApp("GET", Self.clientEntitlements, pair: new).status == 200)
        }
    }

    /// "Revoke with DELETE /mobile-stores/account-tokens/{accountToken}. A revoked token can no longer
    /// authenticate the app"
    @Test func aRevokedTokenCanNoLongerAuthenticateTheApp() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            #expect(try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair).status == 200)
            let revoke = try await api.send("DELETE", Self.accountTokens + "/" + pair.token, bearer: try await api.accessToken())
            #expect(revoke.status == 200, "\(revoke.text)")
            #expect(try revoke.json["revoked"] as? Bool == true)
            let answer = try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair)
            #expect(answer.status == 401)
            #expect(answer.text == Self.invalidPair)
        }
    }

    /// "but it still identifies its customer: purchases tagged with it keep linking to that customer and can
    /// never be claimed by anyone else."
    @Test func purchasesTaggedWithARevokedTokenKeepLinkingToItsCustomerAndCannotBeClaimed() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let owner = try await api.customerWithPair()
            let revoke = try await api.send("DELETE", Self.accountTokens + "/" + owner.token, bearer: bearer)
            #expect(revoke.status == 200, "\(revoke.text)")
            let notified = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: owner.token))
            #expect(try await api.mirrorAsANotificationWould(notified.originalTransactionId) == owner.customerID)
            let unmirrored = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: owner.token))
            let thief = try await api.customerWithPair()
            for transactionID in [notified.transactionId, unmirrored.transactionId] {
                let backend = try await api.send("POST", Self.purchases,
                                                 json: Self.registerApple(thief.customerID, transactionID), bearer: bearer)
                #expect(backend.status == 409, "\(backend.text)")
                let app = try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(transactionID),
                                                  pair: thief)
                #expect(app.status == 409, "\(app.text)")
                #expect(app.text == Self.cannotLink)
            }
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases WHERE customer_id = $1::uuid",
                                         [thief.customerID], as: Int.self) == 0)
            let restored = try await api.send("POST", Self.purchases,
                                              json: Self.registerApple(owner.customerID, unmirrored.transactionId), bearer: bearer)
            #expect(restored.status == 200, "the token's own customer still links it: \(restored.text)")
        }
    }

    /// "Already linked purchases stay linked."
    @Test func alreadyLinkedPurchasesStayLinkedWhenTheTokenIsRevoked() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: pair.token))
            #expect(try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                             pair: pair).status == 200)
            #expect(try await api.send("DELETE", Self.accountTokens + "/" + pair.token, bearer: bearer).status == 200)
            let again = try await api.send("POST", Self.purchases, json: Self.registerApple(pair.customerID, bought.transactionId),
                                           bearer: bearer)
            #expect(again.status == 200, "\(again.text)")
            #expect(try again.json["linked_now"] as? Bool == false, "it was linked all along")
            #expect(try await api.scalar("SELECT customer_id::text FROM customer_subscriptions", as: String.self) == pair.customerID)
            let read = try await api.send("GET", Self.entitlementsPath(pair.customerID), bearer: bearer)
            #expect(try Self.entitlements(read).map { $0["key"] as? String } == ["pro"])
        }
    }

    /// "Require SubscriptionFlow-issued account tokens (…): when on, only issued tokens link purchases."
    @Test func withRequireIssuedTokensOnARawCustomerIDLinksNothing() async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: customer))
            #expect(try await api.mirrorAsANotificationWould(bought.originalTransactionId) == nil,
                    "a raw customer id links nothing while the setting is on")
            let other = try await api.addCustomer()
            let claimed = try await api.send("POST", Self.purchases, json: Self.registerApple(other, bought.transactionId),
                                             bearer: try await api.accessToken())
            #expect(claimed.status == 200, "the purchase is anyone's to claim: \(claimed.text)")
        }
    }

    /// "When off, a raw SubscriptionFlow customer ID set as the account token is also accepted."
    @Test func withRequireIssuedTokensOffARawCustomerIDLinksToo() async throws {
        var options = APIHarness.Options()
        options.requireIssuedTokens = false
        try await APIHarness.with(options) { api in
            let customer = try await api.addCustomer()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: customer))
            #expect(try await api.mirrorAsANotificationWould(bought.originalTransactionId) == customer)
            let other = try await api.addCustomer()
            let claimed = try await api.send("POST", Self.purchases, json: Self.registerApple(other, bought.transactionId),
                                             bearer: try await api.accessToken())
            #expect(claimed.status == 409, "the raw id's customer owns it: \(claimed.text)")
        }
    }

    // MARK: Errors

    /// The reference's example error: {"status": false, "message": "purchase_token is required for Google Play",
    /// "errors": {"purchase_token": ["purchase_token is required for Google Play"]}}, on the backend and the app
    /// endpoint alike.
    @Test func errorsHaveTheShapeOfTheReferencesExample() async throws {
        try await APIHarness.with { api in
            let example = try JSONSerialization.jsonObject(with: Data("""
                {
                  "status": false,
                  "message": "purchase_token is required for Google Play",
                  "errors": {
                    "purchase_token": ["purchase_token is required for Google Play"]
                  }
                }
                """.utf8))
            let backend = try await api.send("POST", Self.purchases,
                                             json: #"{"customer_id":"\#(try await api.addCustomer())","store":"google_play"}"#,
                                             bearer: try await api.accessToken())
            let app = try await api.sendAsApp("POST", Self.clientPurchases, json: #"{"store":"google_play"}"#,
                                              pair: try await api.customerWithPair())
            for answer in [backend, app] {
                #expect(answer.status == 422, "\(answer.text)")
                #expect(try Self.canonical(try JSONSerialization.jsonObject(with: answer.body)) == Self.canonical(example),
                        "\(answer.text)")
            }
        }
    }

    /// "errors is present only for field validation failures (and for Customer not found on customer_id).
    /// message is always set"
    @Test func errorsIsPresentOnlyForFieldValidationAndCustomerNotFoundOnCustomerID() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let owner = try await api.addCustomer()
            let bought = try await api.buyOnAppStore()
            #expect(try await api.send("POST", Self.purchases, json: Self.registerApple(owner, bought.transactionId),
                                       bearer: bearer).status == 200)
            let withErrors = [
                try await api.send("POST", Self.accountTokens, json: #"{"customer_id":42}"#, bearer: bearer),
                try await api.send("POST", Self.accountTokens, json: #"{"customer_id":"\#(UUID().uuidString)"}"#, bearer: bearer),
                try await api.send("POST", Self.purchases, json: Self.registerApple(UUID().uuidString, "1"), bearer: bearer),
            ]
            let customerNotFound = try #require(try withErrors[1].json["errors"] as? [String: [String]])
            #expect(customerNotFound == ["customer_id": ["Customer not found"]])
            for answer in withErrors {
                #expect(answer.status == 422, "\(answer.text)")
                #expect(try answer.json["errors"] as? [String: [String]] != nil, "\(answer.text)")
            }
            let withoutErrors = [
                try await api.send("GET", Self.entitlementsPath(UUID().uuidString), bearer: bearer),
                try await api.send("DELETE", Self.accountTokens + "/" + UUID().uuidString, bearer: bearer),
                try await api.send("POST", Self.purchases, json: Self.registerApple(try await api.addCustomer(), bought.transactionId),
                                   bearer: bearer),
                try await api.send("POST", Self.purchases, json: Self.registerApple(owner, "2000000999999"), bearer: bearer),
                try await api.send("GET", Self.prefix + "/nope", bearer: bearer),
                try await api.send("POST", Self.accountTokens, json: "[]", bearer: bearer),
                try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                        pair: try await api.customerWithPair()),
            ]
            #expect(withoutErrors.map(\.status) == [404, 404, 409, 422, 404, 400, 409])
            for answer in withErrors + withoutErrors {
                let json = try answer.json
                #expect(json["status"] as? Bool == false, "\(answer.text)")
                #expect((json["message"] as? String)?.isEmpty == false, "\(answer.text)")
            }
            for answer in withoutErrors {
                #expect(try answer.json["errors"] == nil, "\(answer.text)")
            }
        }
    }

    /// "it is the first validation message when errors is present."
    @Test func messageIsTheFirstValidationMessage() async throws {
        try await APIHarness.with { api in
            let answer = try await api.send("POST", Self.accountTokens, json: #"{"rotate":"yes"}"#,
                                            bearer: try await api.accessToken())
            #expect(answer.status == 422, "\(answer.text)")
            let json = try answer.json
            let errors = try #require(json["errors"] as? [String: [String]])
            #expect(errors.keys.sorted() == ["customer_id", "rotate"], "two fields failed: \(answer.text)")
            #expect(json["message"] as? String == "customer_id is required")
            #expect(answer.text.contains(#""errors":{"customer_id":["customer_id is required"]"#),
                    "the message is the first listed failure: \(answer.text)")
        }
    }

    /// "The app endpoint never reveals whether a purchase exists. Every ownership refusal, purchase unknown to the
    /// store, or production purchase sent to a Sandbox connection answers the same 409 This purchase cannot be
    /// linked to this account." (The Sandbox connection's case is in
    /// `aSandboxConnectionRefusesProductionPurchasesWith422OnTheBackendAnd409InTheApp`.)
    @Test func theAppEndpointAnswersTheSame409ForEveryOwnershipRefusalAndUnknownPurchase() async throws {
        try await APIHarness.with { api in
            let owner = try await api.customerWithPair()
            let linked = try await api.buyOnAppStore()
            #expect(try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(linked.transactionId),
                                             pair: owner).status == 200)
            let tagged = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: owner.token))
            let other = try await api.customerWithPair()
            var bodies: Set<String> = []
            for (name, transactionID) in [("linked to another customer", linked.transactionId),
                                          ("tagged for another customer", tagged.transactionId),
                                          ("unknown to the store", "2000000999999")] {
                let answer = try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(transactionID),
                                                     pair: other)
                #expect(answer.status == 409, "\(name): \(answer.text)")
                bodies.insert(answer.text)
            }
            #expect(bodies == [Self.cannotLink])
        }
    }

    // MARK: Idempotency

    /// "Registering or reporting the same purchase again is safe: SubscriptionFlow re-fetches the store state and
    /// re-syncs; each store charge and refund is booked at most once (unique per store transaction)."
    @Test func registeringOrReportingAgainBooksEachStoreChargeAndRefundOnce() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore()
            #expect(try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                             pair: pair).status == 200)
            try await api.apple.renew(bought.originalTransactionId, silent: true)
            try await api.apple.refund(bought.originalTransactionId, silent: true)
            var answers: [APIHarness.Answer] = []
            for _ in 0..<2 {
                answers.append(try await api.send("POST", Self.purchases,
                                                  json: Self.registerApple(pair.customerID, bought.transactionId), bearer: bearer))
                answers.append(try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                                       pair: pair))
            }
            #expect(answers.map(\.status) == [200, 200, 200, 200], "\(answers.map(\.text))")
            #expect(Set(try answers.map { try #require(try $0.json["subscription_id"] as? Int) }).count == 1,
                    "the same subscription every time")
            let registered = try #require(try answers[0].json["subscription"] as? [String: Any])
            #expect(registered["store_state"] as? String == "revoked", "the store's state, re-synced: \(answers[0].text)")
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 1)
            #expect(try await api.scalar("SELECT count(*) FROM invoices", as: Int.self) == 2, "the purchase and the renewal")
            #expect(try await api.scalar("SELECT count(*) FROM payments", as: Int.self) == 2)
            #expect(try await api.scalar("SELECT count(*) FROM refunds", as: Int.self) == 1)
        }
    }

    /// "Issuing a token without rotate is idempotent"
    @Test func issuingATokenWithoutRotateIsIdempotent() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            var tokens: [String] = []
            for body in [#"{"customer_id":"\#(customer)"}"#, #"{"customer_id":"\#(customer)"}"#,
                         #"{"customer_id":"\#(customer)","rotate":false}"#] {
                let answer = try await api.send("POST", Self.accountTokens, json: body, bearer: bearer)
                tokens.append(try #require(try answer.json["account_token"] as? String, "\(answer.text)"))
            }
            #expect(Set(tokens).count == 1)
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens", as: Int.self) == 1)
        }
    }

    /// "revoking is idempotent"
    @Test func revokingIsIdempotent() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let pair = try await api.customerWithPair()
            let first = try await api.send("DELETE", Self.accountTokens + "/" + pair.token, bearer: bearer)
            let revokedAt = try await api.scalar("SELECT revoked_at::text FROM account_tokens", as: String.self)
            let second = try await api.send("DELETE", Self.accountTokens + "/" + pair.token, bearer: bearer)
            #expect(first.status == 200 && second.status == 200, "\(first.text) \(second.text)")
            #expect(first.body == second.body)
            #expect(try await api.scalar("SELECT revoked_at::text FROM account_tokens", as: String.self) == revokedAt)
        }
    }

    /// "These endpoints let your backend add the usage values Apple asks for." and "usage reports are upserts":
    /// a second report for a transaction replaces the first, and the read answers the latest.
    @Test func usageReportsAreUpserts() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let bought = try await api.buyOnAppStore()
            #expect(try await api.send("POST", Self.purchases, json: Self.registerApple(customer, bought.transactionId),
                                       bearer: bearer).status == 200)
            let path = Self.usagePath(customer, bought.transactionId)
            let first = try await api.send("PUT", path, json: """
                {"customer_consented":true,"delivery_status":"DELIVERED","sample_content_provided":false,"consumption_percentage":25000}
                """, bearer: bearer)
            let second = try await api.send("PUT", path, json: """
                {"customer_consented":true,"delivery_status":"UNDELIVERED_OTHER","sample_content_provided":true}
                """, bearer: bearer)
            #expect(first.status == 200 && second.status == 200, "\(first.text) \(second.text)")
            #expect(try await api.scalar("SELECT count(*) FROM consumption_usage", as: Int.self) == 1)
            let read = try await api.send("GET", path, bearer: bearer)
            #expect(read.status == 200, "\(read.text)")
            #expect(try read.json["delivery_status"] as? String == "UNDELIVERED_OTHER")
            #expect(try read.json["sample_content_provided"] as? Bool == true)
        }
    }

    /// "Retry 502, 503 and 429; do not retry other 4xx answers unchanged.": a store outage is a 503 with
    /// Retry-After that succeeds once retried; a 422 sent again unchanged answers the same 422.
    @Test func a503IsWorthRetryingAndAnUnchanged4xxAnswersTheSameAgain() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let bought = try await api.buyOnAppStore()
            try api.apple.failNextRequests(4)
            let down = try await api.send("POST", Self.purchases, json: Self.registerApple(customer, bought.transactionId),
                                          bearer: bearer)
            #expect(down.status == 503, "\(down.text)")
            #expect(try #require(down.header("retry-after").flatMap(Int.init)) >= 1)
            try api.apple.failNextRequests(0)
            let retried = try await api.send("POST", Self.purchases, json: Self.registerApple(customer, bought.transactionId),
                                             bearer: bearer)
            #expect(retried.status == 200, "\(retried.text)")
            let invalid = #"{"customer_id":"\#(customer)","store":"google_play"}"#
            let first = try await api.send("POST", Self.purchases, json: invalid, bearer: bearer)
            let again = try await api.send("POST", Self.purchases, json: invalid, bearer: bearer)
            #expect(first.status == 422 && again.status == 422)
            #expect(first.body == again.body)
        }
    }

    // MARK: Limits

    /// "Backend API endpoints share your account's REST API budget (sf_rest_ratelimit: 500 requests per minute
    /// per account) with the rest of the SubscriptionFlow REST API."
    @Test func backendEndpointsShareTheAccountsRESTBudgetOf500PerMinute() async throws {
        try await APIHarness.with { api in
            let other = try await api.database.pool.transaction { db in
                let accountID = try Catalog.addAccount(host: "other.test", on: db)
                let created = try APIClients.add(accountID: accountID, name: "other", sha256: { Digest.sha256($0) }, on: db)
                return (accountID, created)
            }
            #expect(try await api.scalar("SELECT api_rate_limit FROM accounts WHERE id = $1", [other.0], as: Int.self) == 500,
                    "an account's budget is 500 requests per minute unless set otherwise")
            let first = try await api.accessToken()
            let second = try await Self.tokenOfAClient(api, scopes: ["access-global-api"])
            let customer = try await api.addCustomer()
            let answers = [
                try await api.send("GET", Self.entitlementsPath(customer), bearer: first),
                try await api.send("POST", Self.accountTokens, json: #"{"customer_id":"\#(customer)"}"#, bearer: second),
                try await api.send("POST", Self.purchases, json: "{}", bearer: first),
                try await api.send("GET", Self.usagePath(customer, "1"), bearer: second),
                try await api.send("DELETE", Self.accountTokens + "/" + UUID().uuidString, bearer: first),
            ]
            #expect(answers.map { $0.header("x-ratelimit-limit") } == Array(repeating: "500", count: 5))
            #expect(answers.map { $0.header("x-ratelimit-remaining") } == ["499", "498", "497", "496", "495"],
                    "every endpoint and every client of the account spends one budget")
            let issued = try await api.requestToken([("grant_type", "client_credentials"), ("client_id", other.1.client.id),
                                                     ("client_secret", other.1.secret)], host: "other.test")
            let foreign = try #require(try issued.json["access_token"] as? String)
            let theirs = try await api.send("GET", Self.entitlementsPath(UUID().uuidString), bearer: foreign, host: "other.test")
            #expect(theirs.header("x-ratelimit-remaining") == "499", "another account has a budget of its own")
        }
    }

    /// "App / SDK API endpoints have their own limiter and never spend the REST budget"
    @Test func theAppLimiterIsSeparateAndNeverSpendsTheRESTBudget() async throws {
        var options = APIHarness.Options()
        options.rateLimit = 2
        options.appTokenRateLimit = 2
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let path = Self.entitlementsPath(try await api.addCustomer())
            let pair = try await api.customerWithPair()
            #expect(try await api.send("GET", path, bearer: bearer).header("x-ratelimit-remaining") == "1")
            let app = [try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair),
                       try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair),
                       try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair)]
            #expect(app.map(\.status) == [200, 200, 429])
            let backend = try await api.send("GET", path, bearer: bearer)
            #expect(backend.status == 200)
            #expect(backend.header("x-ratelimit-remaining") == "0", "the app's requests spent nothing of the REST budget")
            #expect(try await api.send("GET", path, bearer: bearer).status == 429)
            let fresh = try await api.sendAsApp("GET", Self.clientEntitlements, pair: try await api.customerWithPair())
            #expect(fresh.status == 200, "a spent REST budget does not limit the app")
            #expect(try await api.scalar("SELECT hits FROM api_rate_windows WHERE bucket = 'rest'", as: Int.self) == 3)
        }
    }

    /// "Authenticated limits are per token, not per IP, so many devices behind one NAT are fine."
    @Test func authenticatedAppLimitsArePerTokenNotPerIP() async throws {
        var options = APIHarness.Options()
        options.appTokenRateLimit = 2
        try await APIHarness.with(options) { api in
            let busy = try await api.customerWithPair()
            let quiet = try await api.customerWithPair()
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await api.sendAsApp("GET", Self.clientEntitlements, pair: busy).status) }
            #expect(statuses == [200, 200, 429])
            let other = try await api.sendAsApp("GET", Self.clientEntitlements, pair: quiet)
            #expect(other.status == 200, "another device behind the same address has its own token's budget")
            #expect(other.header("x-ratelimit-limit") == "2")
            #expect(other.header("x-ratelimit-remaining") == "1")
        }
    }

    /// "Requests with a wrong token or secret only count against the per-IP bucket, so junk traffic cannot use up
    /// your account's app budget."
    @Test func wrongTokensOrSecretsCountOnlyAgainstThePerIPBucket() async throws {
        var options = APIHarness.Options()
        options.appAddressFailureLimit = 2
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let wrong = APIHarness.AppPair(customerID: pair.customerID, token: pair.token, secret: "wrong")
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await api.sendAsApp("GET", Self.clientEntitlements, pair: wrong).status) }
            #expect(statuses == [401, 401, 429], "the address is limited")
            let right = try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair)
            #expect(right.status == 200, "\(right.text)")
            #expect(right.header("x-ratelimit-remaining") == "119", "the token's budget is untouched")
            #expect(try await api.scalar("SELECT count(*) FROM api_rate_windows WHERE bucket = 'rest'", as: Int.self) == 0)
        }
    }

    /// "A limited request answers 429 {"message": "Too Many Attempts."} with Retry-After, X-RateLimit-Limit and
    /// X-RateLimit-Remaining headers." — a backend's and an app's alike.
    @Test func aLimitedRequestAnswers429WithRetryAfterAndRateLimitHeaders() async throws {
        var options = APIHarness.Options()
        options.rateLimit = 1
        options.appTokenRateLimit = 1
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let path = Self.entitlementsPath(try await api.addCustomer())
            let pair = try await api.customerWithPair()
            #expect(try await api.send("GET", path, bearer: bearer).status == 200)
            #expect(try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair).status == 200)
            for answer in [try await api.send("GET", path, bearer: bearer),
                           try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair)] {
                #expect(answer.status == 429)
                #expect(answer.text == Self.tooManyAttempts)
                #expect(answer.header("content-type")?.hasPrefix("application/json") == true)
                #expect((1...60).contains(try #require(answer.header("retry-after").flatMap(Int.init), "\(answer.headers)")))
                #expect(answer.header("x-ratelimit-limit") == "1")
                #expect(answer.header("x-ratelimit-remaining") == "0")
            }
        }
    }

    // MARK: Environments

    /// "A purchase is mirrored only when its environment matches the connection, so TestFlight, App Review and
    /// Google licence-tester purchases never become revenue in a Production account."
    @Test func aProductionConnectionMirrorsOnlyProductionPurchases() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        options.google = true
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let pair = try await api.customerWithPair()
            let before = try await api.traces()
            let testFlight = try await api.buyOnAppStore(sandbox: true)
            let tester = try await api.buyOnPlay(testPurchase: true)
            let testToken = try #require(tester.purchaseToken)
            for (body, report) in [(Self.registerApple(pair.customerID, testFlight.transactionId),
                                    Self.reportApple(testFlight.transactionId)),
                                   (Self.registerGoogle(pair.customerID, testToken), Self.reportGoogle(testToken))] {
                let registered = try await api.send("POST", Self.purchases, json: body, bearer: bearer)
                #expect(registered.status == 422, "\(registered.text)")
                let reported = try await api.sendAsApp("POST", Self.clientPurchases, json: report, pair: pair)
                #expect(reported.status == 200, "\(reported.text)")
                #expect(try reported.json["sandbox"] as? Bool == true, "\(reported.text)")
            }
            #expect(try await api.traces() == before, "no sandbox purchase became a row, let alone revenue")
            let production = try await api.buyOnAppStore()
            let mirrored = try await api.send("POST", Self.purchases,
                                              json: Self.registerApple(pair.customerID, production.transactionId), bearer: bearer)
            #expect(mirrored.status == 200, "\(mirrored.text)")
            #expect(try mirrored.json["sandbox"] as? Bool == false)
            #expect(try await api.scalar("SELECT count(*) FROM invoices", as: Int.self) == 1, "only the production charge")
        }
    }

    /// "For such a purchase POST /mobile-stores/client/purchases verifies it (…), applies the same ownership
    /// rules, and answers 200 with "sandbox": true, "linked": false, subscription_id: null and the entitlements of
    /// the mapped plan (each marked "sandbox": true…)." — an Apple Sandbox purchase and a Google licence tester's.
    @Test func theAppEndpointAnswers200WithSandboxTrueForASandboxPurchaseOnProduction() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        options.google = true
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let apple = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: pair.token), sandbox: true)
            let google = try await api.buyOnPlay(obfuscatedAccountId: pair.token, testPurchase: true)
            for (store, body) in [("apple", Self.reportApple(apple.transactionId)),
                                  ("google", Self.reportGoogle(try #require(google.purchaseToken)))] {
                let answer = try await api.sendAsApp("POST", Self.clientPurchases, json: body, pair: pair)
                #expect(answer.status == 200, "\(store): \(answer.text)")
                let json = try answer.json
                #expect(json["sandbox"] as? Bool == true, "\(store)")
                #expect(json["linked"] as? Bool == false, "\(store)")
                #expect(json.keys.contains("subscription_id") && json["subscription_id"] is NSNull, "\(store): \(answer.text)")
                let entitlements = try Self.entitlements(answer)
                #expect(entitlements.map { $0["key"] as? String } == ["pro"], "the mapped plan's: \(answer.text)")
                #expect(entitlements.allSatisfy { $0["sandbox"] as? Bool == true }, "\(store): \(answer.text)")
                #expect(entitlements.allSatisfy { $0["source"] as? String == store }, "\(store): \(answer.text)")
            }
        }
    }

    /// "(…; empty when the purchase is not active / in grace or has expired)."
    @Test func aSessionPurchaseThatHasExpiredGrantsNoEntitlements() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        try await APIHarness.with(options) { api in
            let sandbox = try #require(api.appleSandbox)
            let bought = try await api.buyOnAppStore(sandbox: true)
            try await sandbox.cancel(bought.originalTransactionId, silent: true)
            try await sandbox.expire(bought.originalTransactionId, reason: .voluntary, silent: true)
            let answer = try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                                 pair: try await api.customerWithPair())
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.json["sandbox"] as? Bool == true)
            #expect(try Self.entitlements(answer).isEmpty, "\(answer.text)")
        }
    }

    /// "…applies the same ownership rules…": a sandbox purchase tagged with another customer's token is refused
    /// with the app endpoint's one 409.
    @Test func theAppEndpointAppliesTheSameOwnershipRulesToASandboxPurchase() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        try await APIHarness.with(options) { api in
            let owner = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: owner.token), sandbox: true)
            let answer = try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                                 pair: try await api.customerWithPair())
            #expect(answer.status == 409)
            #expect(answer.text == Self.cannotLink)
            #expect(try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                             pair: owner).status == 200)
        }
    }

    /// "Nothing is recorded: no customer subscription, invoice, payment or link is created, the purchase is not
    /// acknowledged with Google, and the entitlements are not stored. (…) GET /mobile-stores/client/entitlements
    /// and your backend's entitlement reads do not include them."
    @Test func nothingIsRecordedForASessionPurchaseAndEntitlementReadsDoNotIncludeIt() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        options.google = true
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let apple = try await api.buyOnAppStore(sandbox: true)
            let google = try await api.buyOnPlay(testPurchase: true)
            let before = try await api.traces()
            for body in [Self.reportApple(apple.transactionId), Self.reportGoogle(try #require(google.purchaseToken))] {
                let answer = try await api.sendAsApp("POST", Self.clientPurchases, json: body, pair: pair)
                #expect(answer.status == 200, "\(answer.text)")
                #expect(try Self.entitlements(answer).count == 1, "\(answer.text)")
            }
            #expect(try await api.traces() == before, "no subscription, invoice, payment, link or acknowledgement job")
            #expect(try await api.scalar("SELECT count(*) FROM jobs WHERE kind = 'google.acknowledge'", as: Int.self) == 0)
            let app = try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair)
            #expect(app.text == #"{"entitlements":[]}"#)
            let backend = try await api.send("GET", Self.entitlementsPath(pair.customerID), bearer: try await api.accessToken())
            #expect(backend.status == 200)
            #expect(try Self.entitlements(backend).isEmpty, "\(backend.text)")
        }
    }

    /// "Backend register API (POST /mobile-stores/purchases) keeps refusing a sandbox purchase on a Production
    /// connection (422 environment mismatch)."
    @Test func theBackendRegisterRefusesASandboxPurchaseOnProductionWith422EnvironmentMismatch() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        options.google = true
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let apple = try await api.buyOnAppStore(sandbox: true)
            let google = try await api.buyOnPlay(testPurchase: true)
            for body in [Self.registerApple(customer, apple.transactionId),
                         Self.registerGoogle(customer, try #require(google.purchaseToken))] {
                let answer = try await api.send("POST", Self.purchases, json: body, bearer: bearer)
                #expect(answer.status == 422, "\(answer.text)")
                #expect(try (answer.json["message"] as? String)?.hasPrefix("Environment mismatch") == true, "\(answer.text)")
            }
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
        }
    }

    /// "Sandbox connection. On a connection set to Sandbox, sandbox purchases are mirrored normally (the answer has
    /// "sandbox": false)"
    @Test func aSandboxConnectionMirrorsSandboxPurchasesWithSandboxFalse() async throws {
        var options = APIHarness.Options()
        options.environment = .sandbox
        options.google = true
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let pair = try await api.customerWithPair()
            let backendApple = try await api.buyOnAppStore()
            let appApple = try await api.buyOnAppStore()
            let backendGoogle = try await api.buyOnPlay(testPurchase: true)
            let appGoogle = try await api.buyOnPlay(testPurchase: true)
            let answers = [
                try await api.send("POST", Self.purchases, json: Self.registerApple(pair.customerID, backendApple.transactionId),
                                   bearer: bearer),
                try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(appApple.transactionId), pair: pair),
                try await api.send("POST", Self.purchases,
                                   json: Self.registerGoogle(pair.customerID, try #require(backendGoogle.purchaseToken)),
                                   bearer: bearer),
                try await api.sendAsApp("POST", Self.clientPurchases,
                                        json: Self.reportGoogle(try #require(appGoogle.purchaseToken)), pair: pair),
            ]
            for answer in answers {
                #expect(answer.status == 200, "\(answer.text)")
                #expect(try answer.json["sandbox"] as? Bool == false, "\(answer.text)")
                #expect(try answer.json["linked"] as? Bool == true, "\(answer.text)")
                #expect(try answer.json["subscription_id"] as? Int != nil, "\(answer.text)")
            }
            #expect(try await api.scalar("SELECT count(*) FROM customer_subscriptions WHERE customer_id = $1::uuid",
                                         [pair.customerID], as: Int.self) == 4)
        }
    }

    /// "…and a production purchase is refused (backend 422, app 409)." — on the app endpoint the same 409 as every
    /// other refusal about a purchase.
    @Test func aSandboxConnectionRefusesProductionPurchasesWith422OnTheBackendAnd409InTheApp() async throws {
        var options = APIHarness.Options()
        options.environment = .sandbox
        options.google = true
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnPlay()
            let token = try #require(bought.purchaseToken)
            let backend = try await api.send("POST", Self.purchases, json: Self.registerGoogle(pair.customerID, token),
                                             bearer: try await api.accessToken())
            #expect(backend.status == 422, "\(backend.text)")
            #expect(try (backend.json["message"] as? String)?.hasPrefix("Environment mismatch") == true, "\(backend.text)")
            let app = try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportGoogle(token), pair: pair)
            #expect(app.status == 409)
            #expect(app.text == Self.cannotLink)
            // Apple's Sandbox does not know a production transaction at all: the same refusals.
            let production = "2000000999999"
            #expect(try await api.send("POST", Self.purchases, json: Self.registerApple(pair.customerID, production),
                                       bearer: try await api.accessToken()).status == 422)
            #expect(try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(production),
                                             pair: pair).text == Self.cannotLink)
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
        }
    }

    // MARK: Purchases (backend)

    /// "Your backend links a store purchase to a SubscriptionFlow customer: use it when the app could not tag the
    /// purchase, or to restore purchases."
    @Test func theBackendRegisterLinksAnUntaggedPurchaseAndRestoresIt() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let untagged = try await api.buyOnAppStore()
            #expect(try await api.mirrorAsANotificationWould(untagged.originalTransactionId) == nil,
                    "an untagged purchase is nobody's yet")
            let customer = try await api.addCustomer()
            let linked = try await api.send("POST", Self.purchases, json: Self.registerApple(customer, untagged.transactionId),
                                            bearer: bearer)
            #expect(linked.status == 200, "\(linked.text)")
            #expect(try linked.json["linked"] as? Bool == true)
            #expect(try linked.json["linked_now"] as? Bool == true)
            #expect(try await api.scalar("SELECT count(*) FROM invoices WHERE customer_id = $1::uuid", [customer],
                                         as: Int.self) == 1)
            let restored = try await api.send("POST", Self.purchases, json: Self.registerApple(customer, untagged.transactionId),
                                              bearer: bearer)
            #expect(restored.status == 200, "\(restored.text)")
            #expect(try restored.json["linked_now"] as? Bool == false)
            #expect(try Self.entitlements(restored).map { $0["key"] as? String } == ["pro"])
        }
    }

    // MARK: Entitlements

    /// "App Store / Google Play subscriptions follow the store: active until the store expiry"
    @Test func aStoreSubscriptionEntitlesUntilTheStoreExpiry() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let apple = try await api.buyOnAppStore()
            let google = try await api.buyOnPlay()
            for body in [{ (c: String) in Self.registerApple(c, apple.transactionId) },
                         { (c: String) in Self.registerGoogle(c, google.purchaseToken ?? "") }] {
                let customer = try await api.addCustomer()
                let answer = try await api.send("POST", Self.purchases, json: body(customer), bearer: bearer)
                #expect(answer.status == 200, "\(answer.text)")
                let subscription = try #require(try answer.json["subscription"] as? [String: Any])
                #expect(subscription["store_state"] as? String == "active")
                let expiry = try #require(subscription["expires_at"] as? String)
                let read = try await api.send("GET", Self.entitlementsPath(customer), bearer: bearer)
                let entitlements = try Self.entitlements(read)
                #expect(entitlements.map { $0["key"] as? String } == ["pro"])
                #expect(entitlements.first?["expires_at"] as? String == expiry, "until the store's expiry: \(read.text)")
            }
        }
    }

    /// "…grace until the store's grace end."
    @Test func aStoreSubscriptionInGraceEntitlesUntilTheStoresGraceEnd() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let bought = try await api.buyOnAppStore()
            #expect(try await api.send("POST", Self.purchases, json: Self.registerApple(customer, bought.transactionId),
                                       bearer: bearer).status == 200)
            try await api.apple.failToRenew(bought.originalTransactionId, grace: true, silent: true)
            let answer = try await api.send("POST", Self.purchases, json: Self.registerApple(customer, bought.transactionId),
                                            bearer: bearer)
            #expect(answer.status == 200, "\(answer.text)")
            let subscription = try #require(try answer.json["subscription"] as? [String: Any])
            #expect(subscription["store_state"] as? String == "grace", "\(answer.text)")
            let graceEnd = try #require(subscription["grace_ends_at"] as? String, "\(answer.text)")
            #expect(graceEnd != subscription["expires_at"] as? String)
            let read = try await api.send("GET", Self.entitlementsPath(customer), bearer: bearer)
            let entitlements = try Self.entitlements(read)
            #expect(entitlements.map { $0["key"] as? String } == ["pro"])
            #expect(entitlements.first?["expires_at"] as? String == graceEnd, "until the grace end: \(read.text)")
        }
    }

    /// "On hold, paused, expired and revoked do not entitle, whatever SubscriptionFlow shows."
    @Test func onHoldPausedExpiredAndRevokedStoreSubscriptionsDoNotEntitle() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let play = try #require(api.play)
            func registered(_ body: (String) -> String, then change: () async throws -> Void) async throws
                -> (customer: String, state: String?)
            {
                let customer = try await api.addCustomer()
                let first = try await api.send("POST", Self.purchases, json: body(customer), bearer: bearer)
                #expect(first.status == 200, "\(first.text)")
                #expect(try Self.entitlements(first).count == 1, "entitled before: \(first.text)")
                try await change()
                let again = try await api.send("POST", Self.purchases, json: body(customer), bearer: bearer)
                #expect(again.status == 200, "\(again.text)")
                return (customer, (try again.json["subscription"] as? [String: Any])?["store_state"] as? String)
            }
            let held = try await api.buyOnPlay()
            let heldToken = try #require(held.purchaseToken)
            let paused = try await api.buyOnPlay()
            let pausedToken = try #require(paused.purchaseToken)
            let expired = try await api.buyOnAppStore()
            let revoked = try await api.buyOnAppStore()
            let cases = [
                ("on_hold", try await registered({ Self.registerGoogle($0, heldToken) }) {
                    try await play.enterAccountHold(heldToken, silent: true)
                }),
                ("paused", try await registered({ Self.registerGoogle($0, pausedToken) }) {
                    try await play.pause(pausedToken, for: .seconds(7 * 86_400), silent: true)
                }),
                ("expired", try await registered({ Self.registerApple($0, expired.transactionId) }) {
                    try await api.apple.cancel(expired.originalTransactionId, silent: true)
                    try await api.apple.expire(expired.originalTransactionId, reason: .voluntary, silent: true)
                }),
                ("revoked", try await registered({ Self.registerApple($0, revoked.transactionId) }) {
                    try await api.apple.refund(revoked.originalTransactionId, silent: true)
                }),
            ]
            for (state, outcome) in cases {
                #expect(outcome.state == state)
                let read = try await api.send("GET", Self.entitlementsPath(outcome.customer), bearer: bearer)
                #expect(read.status == 200)
                #expect(try Self.entitlements(read).isEmpty, "\(state): \(read.text)")
            }
        }
    }

    /// "Web subscriptions: Active or Trial (unless cancelled_at has passed), or Cancelled while cancelled_at is
    /// still ahead. A web subscription in dunning that is still Active keeps its entitlements."
    @Test func webSubscriptionsEntitleWhileActiveOrTrialOrCancelledBeforeCancelledAt() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            // cancelled_at in seconds from now; nil is none.
            let cases: [(status: String, cancelledAt: Int?, entitles: Bool)] = [
                ("active", nil, true),
                ("trial", nil, true),
                ("active", 86_400, true),
                ("active", -1, false),
                ("trial", -1, false),
                ("cancelled", 86_400, true),
                ("cancelled", -1, false),
                ("expired", nil, false),
            ]
            for (status, cancelledAt, entitles) in cases {
                let customer = try await api.addCustomer()
                let subscription = try await api.addWebSubscription(customer: customer, status: status,
                                                                     cancelledInSeconds: cancelledAt)
                let read = try await api.send("GET", Self.entitlementsPath(customer), bearer: bearer)
                let entitlements = try Self.entitlements(read)
                #expect(entitlements.count == (entitles ? 1 : 0), "\(status), cancelled_at \(cancelledAt.map { "now + \($0) s" } ?? "none"): \(read.text)")
                if entitles {
                    #expect(entitlements.first?["subscription_id"] as? Int == Int(subscription))
                    #expect(entitlements.first?["source"] as? String == "web")
                }
            }
        }
    }

    /// "Entitlements combine web, App Store and Google Play subscriptions." and "Each entitlement names the grant
    /// that lasts longest (no end first, then the latest expires_at) in source, subscription_id and expires_at, and
    /// lists every granting subscription under grants."
    @Test func eachEntitlementNamesTheLongestGrantAndListsEveryGrant() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let apple = try await api.buyOnAppStore()
            let google = try await api.buyOnPlay()
            for body in [Self.registerApple(customer, apple.transactionId),
                         Self.registerGoogle(customer, try #require(google.purchaseToken))] {
                #expect(try await api.send("POST", Self.purchases, json: body, bearer: bearer).status == 200)
            }
            let stores = try await api.send("GET", Self.entitlementsPath(customer), bearer: bearer)
            let storeOnly = try #require(try Self.entitlements(stores).first, "\(stores.text)")
            let storeGrants = try #require(storeOnly["grants"] as? [[String: Any]])
            #expect(Set(storeGrants.compactMap { $0["source"] as? String }) == ["apple", "google"])
            let ends = storeGrants.compactMap { $0["expires_at"] as? String }
            #expect(ends.count == 2 && ends == ends.sorted(by: >), "the latest expires_at first: \(stores.text)")
            #expect(storeOnly["source"] as? String == storeGrants[0]["source"] as? String)
            #expect(storeOnly["subscription_id"] as? Int == storeGrants[0]["subscription_id"] as? Int)
            #expect(storeOnly["expires_at"] as? String == ends.first, "named by the latest end: \(stores.text)")

            let web = try await api.addWebSubscription(customer: customer, status: "active")
            let all = try await api.send("GET", Self.entitlementsPath(customer), bearer: bearer)
            let entitlements = try Self.entitlements(all)
            try #require(entitlements.count == 1, "one key, whatever grants it: \(all.text)")
            let pro = entitlements[0]
            #expect(pro["key"] as? String == "pro")
            #expect(pro["source"] as? String == "web", "no end lasts longest: \(all.text)")
            #expect(pro["subscription_id"] as? Int == Int(web))
            #expect(pro.keys.contains("expires_at") && pro["expires_at"] is NSNull)
            let grants = try #require(pro["grants"] as? [[String: Any]])
            #expect(grants.compactMap { $0["source"] as? String }.first == "web")
            #expect(Set(grants.compactMap { $0["source"] as? String }) == ["web", "apple", "google"], "\(all.text)")
        }
    }

    /// "Times are UTC. expires_at: null means it renews / has no end."
    @Test func timesAreUTCAndANullExpiryMeansNoEnd() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let store = try await api.addCustomer()
            let bought = try await api.buyOnAppStore()
            #expect(try await api.send("POST", Self.purchases, json: Self.registerApple(store, bought.transactionId),
                                       bearer: bearer).status == 200)
            let read = try await api.send("GET", Self.entitlementsPath(store), bearer: bearer)
            let expiry = try #require(try Self.entitlements(read).first?["expires_at"] as? String, "\(read.text)")
            #expect(expiry.hasSuffix("Z"), "UTC: \(expiry)")
            let parsed = try #require(try? Date(expiry, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            #expect(parsed > Date())
            let web = try await api.addCustomer()
            _ = try await api.addWebSubscription(customer: web, status: "active")
            let renewing = try await api.send("GET", Self.entitlementsPath(web), bearer: bearer)
            let entitlement = try #require(try Self.entitlements(renewing).first, "\(renewing.text)")
            #expect(entitlement.keys.contains("expires_at") && entitlement["expires_at"] is NSNull, "\(renewing.text)")
        }
    }

    // MARK: Client endpoints

    /// "The app reads its own customer's entitlements with its account token pair. Same data as the backend
    /// Entitlements endpoint."
    @Test func theClientEntitlementsAreTheSameDataAsTheBackendRead() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: pair.token))
            #expect(try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                             pair: pair).status == 200)
            _ = try await api.addWebSubscription(customer: pair.customerID, status: "active")
            let app = try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair)
            let backend = try await api.send("GET", Self.entitlementsPath(pair.customerID), bearer: try await api.accessToken())
            #expect(app.status == 200 && backend.status == 200)
            #expect(try Self.entitlements(app).count == 1)
            #expect(try Self.canonical(app.json["entitlements"]) == Self.canonical(backend.json["entitlements"]),
                    "\(app.text) vs \(backend.text)")
        }
    }

    /// "The app (or the Flutter SDK) reports a store purchase right after the store completes it. The SDK
    /// completes the store transaction only after a 200." — so a 200 means the mirror has committed, and a
    /// failure commits nothing.
    @Test func theClientPurchasesEndpointAnswers200OnlyOnceTheMirrorCommitted() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore()
            try api.apple.failNextRequests(4)
            let failed = try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                                 pair: pair)
            #expect(failed.status == 503, "\(failed.text)")
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0, "nothing half-written")
            try api.apple.failNextRequests(0)
            let answer = try await api.sendAsApp("POST", Self.clientPurchases, json: Self.reportApple(bought.transactionId),
                                                 pair: pair)
            #expect(answer.status == 200, "\(answer.text)")
            let subscriptionID = try #require(try answer.json["subscription_id"] as? Int)
            // Read at once, on another connection: whatever the 200 says is already committed.
            #expect(try await api.scalar("SELECT customer_id::text FROM customer_subscriptions WHERE id = $1", [subscriptionID],
                                         as: String.self) == pair.customerID)
            #expect(try await api.scalar("SELECT count(*) FROM invoices WHERE customer_id = $1::uuid", [pair.customerID],
                                         as: Int.self) == 1)
            let read = try await api.sendAsApp("GET", Self.clientEntitlements, pair: pair)
            #expect(try Self.entitlements(read).map { $0["subscription_id"] as? Int } == [subscriptionID])
        }
    }
}
