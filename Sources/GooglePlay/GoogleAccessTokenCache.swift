import Crypto
import Foundation
import HTTP
import Logging
import StrictJSON

/// The OAuth 2.0 access token one store connection sends, obtained with the service account's signed assertion
/// (the JWT-bearer grant) and reused until shortly before Google's `expires_in` runs out. Concurrent callers
/// that find no valid token share one request to the token endpoint.
actor GoogleAccessTokenCache {
    /// What the cache needs from the connection's configuration, fixed when the client is made.
    struct Settings: Sendable {
        let clientEmail: String
        let privateKey: PrivateKey
        let privateKeyID: String?
        let tokenURI: String
        let renewalMargin: Duration
        let assertionBackdate: Duration
        let requestTimeout: Duration
    }

    /// Longest access token accepted; Google's are a few hundred bytes.
    static let maxTokenLength = 4096
    /// Longest lifetime believed, whatever `expires_in` says (Google's are an hour).
    static let maxLifetime: Duration = .seconds(86_400)

    private let settings: Settings
    private let http: HTTPClient
    private let now: @Sendable () -> Date
    private let observe: (@Sendable (GooglePlayAPICall) -> Void)?
    private var current: (token: String, renewAt: Date)?
    private var inFlight: Task<(token: String, renewAt: Date), any Error>?

    init(settings: Settings, http: HTTPClient, now: @escaping @Sendable () -> Date,
         observe: (@Sendable (GooglePlayAPICall) -> Void)?) {
        self.settings = settings
        self.http = http
        self.now = now
        self.observe = observe
    }

    /// The current access token, fetching one when there is none or it is within the renewal margin of expiry.
    /// Throws `GooglePlayAPIError` (`.invalidGrant`, `.tokenRejected`, `.tokenUnavailable`, `.tokenInvalidResponse`).
    func token() async throws -> String {
        if let current, now() < current.renewAt { return current.token }
        if let inFlight { return try await inFlight.value.token }
        let task = Task { [settings, http, now, observe] in
            try await Self.fetch(settings: settings, http: http, now: now, observe: observe)
        }
        inFlight = task
        defer { inFlight = nil }
        let fetched = try await task.value
        current = fetched
        return fetched.token
    }

    /// Drops `token` after Google refused it, so the next request fetches a fresh one.
    func discard(_ token: String) {
        if current?.token == token { current = nil }
    }

    // MARK: - Token endpoint

    private static func fetch(settings: Settings, http: HTTPClient, now: @Sendable () -> Date,
                              observe: (@Sendable (GooglePlayAPICall) -> Void)?) async throws -> (token: String, renewAt: Date) {
        let requestedAt = now()
        let assertion: String
        do {
            assertion = try ServiceAccountAssertion.make(
                clientEmail: settings.clientEmail, privateKey: settings.privateKey, tokenURI: settings.tokenURI,
                now: requestedAt.addingTimeInterval(-settings.assertionBackdate.seconds), keyID: settings.privateKeyID)
        } catch {
            throw GooglePlayAPIError(.invalidConfiguration, "signing the service-account assertion failed: \(error)")
        }
        let call = "POST \(settings.tokenURI)"
        let body = PercentEncoding.form([("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                                         ("assertion", assertion)])
        let request = HTTPClientRequest(method: "POST", url: settings.tokenURI,
                                        headers: [("Content-Type", "application/x-www-form-urlencoded"),
                                                  ("Accept", "application/json")],
                                        body: Data(body.utf8), timeout: settings.requestTimeout)
        let started = ContinuousClock.now
        let response: HTTPClientResponse
        do {
            response = try await http.send(request)
        } catch let error as HTTPClientError {
            observe?(GooglePlayAPICall(family: .accessToken, status: nil, duration: ContinuousClock.now - started))
            throw GooglePlayAPIError(.tokenUnavailable, "\(call) got no response: \(error)", transport: error.code)
        }
        observe?(GooglePlayAPICall(family: .accessToken, status: response.status, duration: ContinuousClock.now - started))
        guard (200...299).contains(response.status) else {
            throw refusal(response, call: call, settings: settings, now: now())
        }
        guard let answer = try? JSONReader.read(response.body, TokenAnswer.init(json:)) else {
            throw GooglePlayAPIError(.tokenInvalidResponse, "\(call) answered \(response.status) with a body that is not a "
                                     + "token JSON object (\(response.body.count) bytes)", httpStatus: response.status)
        }
        guard let token = answer.accessToken, (1...maxTokenLength).contains(token.utf8.count),
              token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw GooglePlayAPIError(.tokenInvalidResponse, "\(call) answered without a usable access_token "
                                     + "(missing, empty, over \(maxTokenLength) bytes or not printable ASCII)",
                                     httpStatus: response.status)
        }
        if let type = answer.tokenType, type.lowercased() != "bearer" {
            throw GooglePlayAPIError(.tokenInvalidResponse, "\(call) answered token_type \(type.prefix(20).debugDescription), "
                                     + "not Bearer", httpStatus: response.status)
        }
        guard let expiresIn = answer.expiresIn, expiresIn > 0 else {
            throw GooglePlayAPIError(.tokenInvalidResponse, "\(call) answered without a positive expires_in",
                                     httpStatus: response.status)
        }
        let lifetime = min(Duration.seconds(expiresIn), maxLifetime)
        return (token, requestedAt.addingTimeInterval((lifetime - settings.renewalMargin).seconds))
    }

    /// Classifies a non-2xx answer of the token endpoint (RFC 6749 §5.2: `{"error": …, "error_description": …}`).
    private static func refusal(_ response: HTTPClientResponse, call: String, settings: Settings, now: Date)
        -> GooglePlayAPIError
    {
        let status = response.status
        let answer = try? JSONReader.read(response.body, TokenError.init(json:))
        let error = answer?.error.map { String($0.prefix(64)) }
        let description = answer?.errorDescription.map { String($0.prefix(300)) }
        let said = [error, description.map { "\"\($0)\"" }].compactMap { $0 }.joined(separator: " ")
        let prefix = "\(call) answered \(status)\(said.isEmpty ? "" : " \(said)")"
        if error == "invalid_grant" {
            let key = settings.privateKeyID.map { "key \($0) of " } ?? "the key of "
            return GooglePlayAPIError(.invalidGrant, "\(prefix): Google refused the service-account assertion; check that "
                                      + "this host's clock is right (NTP) — Google refuses assertions outside its time "
                                      + "window — and that \(key)\(settings.clientEmail) still exists and is enabled",
                                      httpStatus: status, reason: error)
        }
        switch status {
        case 429, 500...599:
            return GooglePlayAPIError(.tokenUnavailable, "\(prefix): the token endpoint is unavailable; try again later",
                                      httpStatus: status, reason: error,
                                      retryAfter: GooglePlayAPIError.retryAfter(response, now: now))
        case 400...499:
            return GooglePlayAPIError(.tokenRejected, "\(prefix): check the service account's email, key and the token URI",
                                      httpStatus: status, reason: error)
        default:
            return GooglePlayAPIError(.tokenInvalidResponse, "\(prefix): not a status the token endpoint answers",
                                      httpStatus: status, reason: error)
        }
    }

    /// RFC 6749 §5.1's answer; `expires_in` as a number or a decimal string.
    private struct TokenAnswer: JSONReadable {
        var accessToken: String?
        var expiresIn: Int64?
        var tokenType: String?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "access_token": accessToken = try reader.readString()
                case "expires_in": expiresIn = try reader.readLenientInteger(Int64.self)
                case "token_type": tokenType = try reader.readString()
                default: try reader.skipValue()
                }
            }
        }
    }

    /// RFC 6749 §5.2's error answer.
    private struct TokenError: JSONReadable {
        var error: String?
        var errorDescription: String?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "error": error = try reader.readString()
                case "error_description": errorDescription = try reader.readString()
                default: try reader.skipValue()
                }
            }
        }
    }
}
