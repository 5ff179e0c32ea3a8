import Crypto
import Foundation
import GooglePlay

extension ConnectionsCommand {
    /// A service-account JSON key is a few kilobytes; anything far larger is not one.
    static let maxServiceAccountKeyBytes = 64 * 1024

    static func googleConnection(_ arguments: inout Arguments, environment: Environment) throws -> Request {
        var request = try common(&arguments, store: .google, appOption: "--package-name")
        let key = try serviceAccountKey(file: try arguments.option("--service-account-key"),
                                        variable: try arguments.option("--service-account-key-env"),
                                        environment: environment)
        request.connection.apiClientEmail = key.clientEmail
        request.connection.apiPrivateKeyPEM = key.privateKeyPEM
        request.connection.apiTokenURI = try arguments.option("--token-uri").map { try baseURL($0, option: "--token-uri") }
            ?? key.tokenURI
        guard let audience = try arguments.option("--push-audience") else { throw UsageError("--push-audience is required") }
        guard (1...2000).contains(audience.utf8.count), audience.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw UsageError("--push-audience must be 1…2000 bytes of printable ASCII without spaces (the URL Pub/Sub "
                             + "puts in its tokens' aud)")
        }
        request.connection.pushAudience = audience
        guard let email = try arguments.option("--push-service-account") else {
            throw UsageError("--push-service-account is required")
        }
        request.connection.pushServiceAccount = try self.email(email, "--push-service-account")
        request.connection.apiBaseURL = try arguments.option("--api-base-url").map { try baseURL($0) }
        request.connection.pushJWKSURL = try arguments.option("--jwks-url").map { try baseURL($0, option: "--jwks-url") }
        try arguments.finish()
        // What every job of the connection would otherwise dead-letter on, refused now in the worker's words.
        do {
            try GooglePlayAPIConfiguration(packageName: request.connection.appIdentifier, clientEmail: key.clientEmail,
                                           privateKey: key.privateKey, tokenURI: request.connection.apiTokenURI,
                                           baseURL: request.connection.apiBaseURL).validateConnection()
        } catch {
            throw UsageError("this connection could not call Google: \(error.message)")
        }
        return request
    }

    struct ServiceAccountKey {
        let clientEmail: String
        let privateKey: PrivateKey
        let privateKeyPEM: String
        let tokenURI: String?
    }

    /// Google's JSON key file: `client_email`, an RSA `private_key` (PKCS#8 PEM) and `token_uri`.
    static func serviceAccountKey(file: String?, variable: String?, environment: Environment) throws -> ServiceAccountKey {
        let data: Data
        let source: String
        switch (file, variable) {
        case (let path?, nil):
            data = try Parse.file(path, "service-account key", limit: maxServiceAccountKeyBytes)
            source = "service-account key file \(Parse.redacted(path) ?? path)"
        case (nil, let name?):
            guard let value = environment.string(name) else {
                throw UsageError("--service-account-key-env: environment variable \(Parse.quoted(name)) is not set")
            }
            guard value.utf8.count <= maxServiceAccountKeyBytes else {
                throw UsageError("--service-account-key-env: \(name) is larger than \(maxServiceAccountKeyBytes) bytes")
            }
            data = Data(value.utf8)
            source = "environment variable \(name)"
        case (nil, nil): throw UsageError("--service-account-key FILE or --service-account-key-env VAR is required")
        case (_?, _?): throw UsageError("give --service-account-key FILE or --service-account-key-env VAR, not both")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw UsageError("\(source) is not a JSON object (a service-account key from Google Cloud)")
        }
        guard let clientEmail = object["client_email"] as? String, let pem = object["private_key"] as? String else {
            throw UsageError("\(source) lacks client_email or private_key")
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: pem)
        } catch {
            throw UsageError("\(source): private_key is not a readable unencrypted PEM private key")
        }
        guard case .rsa = key.kind else {
            throw UsageError("\(source): private_key holds an \(key.kind) key; service-account keys are RSA")
        }
        let tokenURI = try (object["token_uri"] as? String).map { try baseURL($0, option: "token_uri") }
        return ServiceAccountKey(clientEmail: try email(clientEmail, "client_email"), privateKey: key,
                                 privateKeyPEM: try key.pem(), tokenURI: tokenURI)
    }

    private static func email(_ text: String, _ name: String) throws -> String {
        guard text.utf8.count <= 320, Parse.matches(text, "[^@\\s]+@[^@\\s]+") else {
            throw UsageError("\(name) must be an e-mail address, got \(Parse.quoted(text))")
        }
        return text
    }
}
