import Crypto
import Foundation
import GooglePlay
import HTTP
import Simulator
import Testing

/// The OAuth token endpoint checks service-account assertions as Google does, and the API takes only live
/// access tokens from it.
@Suite struct GoogleOAuthTests {
    @Test func aValidAssertionBuysAnAccessTokenTheAPIAccepts() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let assertion = try ServiceAccountAssertion.make(clientEmail: GoogleFixture.serviceAccountEmail,
                                                         privateKey: GoogleFixture.serviceAccountKey.get(),
                                                         tokenURI: harness.simulator.tokenURI)
        let response = try await harness.requestToken(assertion: assertion)
        #expect(response.status == 200)
        #expect(response.header("content-type")?.hasPrefix("application/json") == true)
        let body = try jsonObject(response)
        #expect(Set(body.keys) == ["access_token", "expires_in", "token_type"])
        #expect(body["expires_in"] as? Int == 3599 && body["token_type"] as? String == "Bearer")
        let accessToken = try #require(body["access_token"] as? String)
        #expect(accessToken.hasPrefix("ya29."))

        let answer = try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)", authorization: "Bearer \(accessToken)")
        #expect(answer.status == 200)
        #expect(harness.simulator.issuedAccessTokenCount == 1)
        #expect(harness.simulator.requestCount(.token) == 1)
        await harness.close()
    }

    @Test func theTokenLifetimeIsConfigurable() async throws {
        let harness = try GoogleHarness(push: false, accessTokenLifetime: .seconds(90))
        let assertion = try ServiceAccountAssertion.make(clientEmail: GoogleFixture.serviceAccountEmail,
                                                         privateKey: GoogleFixture.serviceAccountKey.get(),
                                                         tokenURI: harness.simulator.tokenURI)
        #expect(try jsonObject(try await harness.requestToken(assertion: assertion))["expires_in"] as? Int == 90)
        await harness.close()
    }

    /// An assertion built by `make`; each case spoils one thing about it.
    enum BadAssertion: String, CaseIterable {
        case foreignKey, wrongIssuer, wrongAudience, googleAudience, wrongScope, expired, tooLong, issuedInFuture, notAJWT,
             tamperedClaims

        func assertion(tokenURI: String) throws -> String {
            let key = try GoogleFixture.serviceAccountKey.get()
            let email = GoogleFixture.serviceAccountEmail
            switch self {
            case .foreignKey:
                return try ServiceAccountAssertion.make(clientEmail: email, privateKey: GoogleFixture.foreignKey.get(), tokenURI: tokenURI)
            case .wrongIssuer:
                return try ServiceAccountAssertion.make(clientEmail: "other@example.iam.gserviceaccount.com", privateKey: key,
                                                        tokenURI: tokenURI)
            case .wrongAudience:
                return try ServiceAccountAssertion.make(clientEmail: email, privateKey: key, tokenURI: tokenURI + "/v2")
            case .googleAudience:
                return try ServiceAccountAssertion.make(clientEmail: email, privateKey: key)
            case .wrongScope:
                return try ServiceAccountAssertion.make(clientEmail: email, privateKey: key,
                                                        scope: "https://www.googleapis.com/auth/cloud-platform", tokenURI: tokenURI)
            case .expired:
                return try ServiceAccountAssertion.make(clientEmail: email, privateKey: key, tokenURI: tokenURI,
                                                        now: Date().addingTimeInterval(-3700))
            case .tooLong:
                return try CompactJWS.sign(payload: claims(tokenURI: tokenURI, lifetime: 3601), algorithm: .rs256, key: key, typ: "JWT")
            case .issuedInFuture:
                return try ServiceAccountAssertion.make(clientEmail: email, privateKey: key, tokenURI: tokenURI,
                                                        now: Date().addingTimeInterval(600))
            case .notAJWT:
                return "not-a-jwt"
            case .tamperedClaims:
                let valid = try ServiceAccountAssertion.make(clientEmail: email, privateKey: key, tokenURI: tokenURI)
                let parts = valid.split(separator: ".")
                return [String(parts[0]), Base64URL.encode(try claims(tokenURI: tokenURI, lifetime: 1800)), String(parts[2])]
                    .joined(separator: ".")
            }
        }

        var expectedError: String { self == .wrongScope ? "invalid_scope" : "invalid_grant" }

        private func claims(tokenURI: String, lifetime: Int64) throws -> Data {
            let now = Int64(Date().timeIntervalSince1970)
            return try JSONSerialization.data(withJSONObject: [
                "iss": GoogleFixture.serviceAccountEmail, "scope": ServiceAccountAssertion.androidPublisherScope, "aud": tokenURI,
                "iat": now, "exp": now + lifetime,
            ])
        }
    }

    @Test("a bad assertion is refused with Google's OAuth error", arguments: BadAssertion.allCases)
    func badAssertion(_ bad: BadAssertion) async throws {
        let harness = try GoogleHarness(push: false)
        let response = try await harness.requestToken(assertion: try bad.assertion(tokenURI: harness.simulator.tokenURI))
        #expect(response.status == 400)
        let body = try jsonObject(response)
        #expect(body["error"] as? String == bad.expectedError)
        #expect((body["error_description"] as? String)?.isEmpty == false)
        #expect(harness.simulator.issuedAccessTokenCount == 0)
        #expect(harness.simulator.authenticationFailures.count == 1)
        await harness.close()
    }

    @Test func theGrantTypeAndAssertionAreRequired() async throws {
        let harness = try GoogleHarness(push: false)
        let wrongGrant = try await harness.requestToken(assertion: "x.y.z", grantType: "client_credentials")
        #expect(wrongGrant.status == 400)
        #expect(try jsonObject(wrongGrant)["error"] as? String == "unsupported_grant_type")
        let missing = try await harness.client.send(HTTPClientRequest(
            method: "POST", url: harness.simulator.tokenURI, headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer".utf8), timeout: .seconds(10)))
        #expect(missing.status == 400)
        #expect(try jsonObject(missing)["error"] as? String == "invalid_request")
        await harness.close()
    }

    @Test("API calls need a live access token", arguments: ["", "Basic abc", "Bearer ya29.never-issued"])
    func apiCallsNeedALiveAccessToken(_ authorization: String) async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let refused = try await harness.api("GET", "purchases/subscriptionsv2/tokens/\(token)", authorization: authorization)
        #expect(refused.status == 401)
        let error = try googleError(refused)
        #expect(error["code"] as? Int == 401 && error["status"] as? String == "UNAUTHENTICATED")
        #expect(googleReason(refused) == "authError")
        #expect(refused.header("www-authenticate")?.hasPrefix("Bearer") == true)
        #expect(harness.simulator.requestCount(.subscriptionsV2) == 1)
        await harness.close()
    }

    @Test func expiredAccessTokensAreRefusedUntilANewOneIsObtained() async throws {
        let harness = try GoogleHarness(push: false)
        let token = try await harness.purchase()
        let accessToken = try await harness.accessToken()
        let path = "purchases/subscriptionsv2/tokens/\(token)"
        #expect(try await harness.api("GET", path, authorization: "Bearer \(accessToken)").status == 200)
        harness.simulator.expireAccessTokens()
        #expect(try await harness.api("GET", path, authorization: "Bearer \(accessToken)").status == 401)
        #expect(try await harness.api("GET", path).status == 200)
        #expect(harness.simulator.issuedAccessTokenCount == 2)
        await harness.close()
    }

    @Test func aKeyFileForTheServiceAccountPointsAtTheSimulator() async throws {
        let harness = try GoogleHarness(push: false)
        let key = try GoogleFixture.serviceAccountKey.get()
        let file = try harness.simulator.serviceAccountKeyFile(privateKey: key, privateKeyID: "kid-1")
        let json = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
        #expect(json["type"] as? String == "service_account")
        #expect(json["client_email"] as? String == GoogleFixture.serviceAccountEmail)
        #expect(json["token_uri"] as? String == harness.simulator.tokenURI)
        #expect(json["private_key_id"] as? String == "kid-1")
        let parsed = try PrivateKey(pem: try #require(json["private_key"] as? String))
        let assertion = try ServiceAccountAssertion.make(clientEmail: GoogleFixture.serviceAccountEmail, privateKey: parsed,
                                                         tokenURI: harness.simulator.tokenURI)
        #expect(try await harness.requestToken(assertion: assertion).status == 200)
        await harness.close()
    }
}
