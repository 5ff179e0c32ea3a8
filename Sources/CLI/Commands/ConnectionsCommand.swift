import Accounts
import Crypto
import Foundation
import StoreModel

struct ConnectionsCommand: Command {
    static let name = "connections"
    static let summary = "connect an account's app on a store, list and show connections"
    static let usage = """
        usage: storesync connections add apple --account A --bundle-id B --environment Production|Sandbox
                                               [--app-apple-id N] --key-id K --issuer-id I
                                               --private-key FILE | --private-key-env VAR
                                               [--api-base-url URL] [--sandbox-api-base-url URL] [--root FILE]…
                                               [--require-issued-tokens on|off]
                                               [--answer-consumption-requests on|off]
                                               [--consumption-refund-preference DECLINE|GRANT_FULL|GRANT_PRORATED]
                                               [--json]
               storesync connections add google --account A --package-name P --environment Production|Sandbox
                                                --service-account-key FILE | --service-account-key-env VAR
                                                --push-audience AUD --push-service-account EMAIL
                                                [--api-base-url URL] [--token-uri URL] [--jwks-url URL]
                                                [--require-issued-tokens on|off] [--json]
               storesync connections list [--json]
               storesync connections show ID

        A connection is one app on one store in one environment of an account (A: its id or webhook host);
        only purchases of that environment are mirrored through it.

          --app-apple-id N     the app's Apple ID; required for Production, where Apple's notifications carry it
          --key-id, --issuer-id, --private-key
                               the App Store Server API key from App Store Connect (Users and Access →
                               Integrations → In-App Purchase): its id, the issuer UUID and the .p8 file
                               (a PKCS#8 P-256 PEM); --private-key-env reads the PEM from a variable instead
          --api-base-url URL   talk to a simulator or proxy instead of Apple
          --sandbox-api-base-url URL
                               Production only: where a purchase a backend registers that Production does
                               not know is looked up, with the same key, to tell a sandbox purchase (422
                               environment mismatch) from an unknown one (default Apple's sandbox host,
                               unless --api-base-url points elsewhere: then no sandbox lookup)
          --root FILE          trust this root certificate (PEM or DER) instead of Apple Root CA - G3; repeatable
          --require-issued-tokens
                               only SubscriptionFlow-issued account tokens link purchases (default: on for
                               connections created from 2026-10-28)
          --answer-consumption-requests, --consumption-refund-preference
                               answer Apple's consumption requests (default off), with this preference
                               when the backend recorded none

        Google:
          --service-account-key FILE
                               the JSON key of the service account with access to the app in Play Console
                               (its client_email, RSA private_key and token_uri are kept); or
                               --service-account-key-env VAR holding that JSON
          --push-audience, --push-service-account
                               what the Pub/Sub push subscription's OIDC tokens carry: the audience it is
                               configured with and the service account it signs as
          --api-base-url, --token-uri, --jwks-url
                               a simulator's or proxy's Play API, OAuth token endpoint and push-key JWKS

        Secrets are stored but never printed: `show` says only whether the private key is set.
        """

    /// Apple's `.p8` files are a few hundred bytes; anything near the column's limit is not one.
    static let maxPrivateKeyBytes = 16 * 1024
    static let maxRootsBytes = 64 * 1024

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let json = arguments.flag("--json")
        switch arguments.positional() {
        case "add"?:
            guard let storeName = arguments.positional() else { throw UsageError("say which store to connect: apple or google") }
            switch Store(rawValue: storeName) {
            case .apple?:
                return try await add(try encrypted(appleConnection(&arguments, environment: environment)), json: json,
                                     environment: environment)
            case .google?:
                return try await add(try encrypted(googleConnection(&arguments, environment: environment)), json: json,
                                     environment: environment)
            case nil: throw UsageError("unknown store \(Parse.quoted(storeName)); available: apple, google")
            }
        case "list"?:
            try arguments.finish()
            return try await list(json: json, environment: environment)
        case "show"?:
            guard let text = arguments.positional() else { throw UsageError("show needs an ID") }
            try arguments.finish()
            return try await show(id: try Parse.id(text, "ID"), environment: environment)
        case let other?:
            throw UsageError("unknown action \(Parse.quoted(other)); say add, list or show")
        case nil:
            throw UsageError("say add, list or show")
        }
    }

    /// A validated new connection; its `accountID` is filled in once `account` is looked up.
    struct Request {
        var account: AccountReference
        var connection: Catalog.NewConnection
    }

    /// Parses what every store's connection has, then hands the rest to the store's own options.
    static func common(_ arguments: inout Arguments, store: Store, appOption: String) throws -> Request {
        guard let account = try arguments.option("--account") else { throw UsageError("--account is required") }
        guard let app = try arguments.option(appOption) else { throw UsageError("\(appOption) is required") }
        guard let environmentName = try arguments.option("--environment") else {
            throw UsageError("--environment Production|Sandbox is required")
        }
        guard let environment = StoreEnvironment(lenient: environmentName) else {
            throw UsageError("--environment must be Production or Sandbox, got \(Parse.quoted(environmentName))")
        }
        guard Parse.matches(app, "[A-Za-z0-9._-]{1,255}") else {
            throw UsageError("\(appOption) must be 1…255 of A-Z a-z 0-9 . _ -, got \(Parse.quoted(app))")
        }
        var connection = Catalog.NewConnection(accountID: 0, store: store, appIdentifier: app, environment: environment)
        connection.requireIssuedTokens = try arguments.option("--require-issued-tokens")
            .map { try Parse.onOff($0, "--require-issued-tokens") }
        return Request(account: try Parse.account(account), connection: connection)
    }

    private static func appleConnection(_ arguments: inout Arguments, environment: Environment) throws -> Request {
        var request = try common(&arguments, store: .apple, appOption: "--bundle-id")
        request.connection.appAppleID = try arguments.option("--app-apple-id").map { text in
            guard let id = Int64(text), id > 0 else {
                throw UsageError("--app-apple-id must be a positive integer, got \(Parse.quoted(text))")
            }
            return id
        }
        if request.connection.environment == .production, request.connection.appAppleID == nil {
            throw UsageError("--app-apple-id is required for Production (Apple sends it in production notifications)")
        }
        guard let keyID = try arguments.option("--key-id") else { throw UsageError("--key-id is required") }
        guard Parse.matches(keyID, "[A-Za-z0-9]{1,100}") else {
            throw UsageError("--key-id must be 1…100 letters and digits, got \(Parse.quoted(keyID))")
        }
        guard let issuerID = try arguments.option("--issuer-id") else { throw UsageError("--issuer-id is required") }
        request.connection.apiKeyID = keyID
        request.connection.apiIssuerID = try Parse.uuid(issuerID, "--issuer-id")
        request.connection.apiPrivateKeyPEM = try applePrivateKey(file: try arguments.option("--private-key"),
                                                                  variable: try arguments.option("--private-key-env"),
                                                                  environment: environment)
        request.connection.apiBaseURL = try arguments.option("--api-base-url").map { try baseURL($0) }
        request.connection.sandboxAPIBaseURL = try arguments.option("--sandbox-api-base-url").map {
            try baseURL($0, option: "--sandbox-api-base-url")
        }
        if request.connection.sandboxAPIBaseURL != nil, request.connection.environment != .production {
            throw UsageError("--sandbox-api-base-url is for Production connections (a Sandbox one asks the sandbox already)")
        }
        request.connection.trustedRootsPEM = try roots(try arguments.options("--root"))
        if let answer = try arguments.option("--answer-consumption-requests") {
            request.connection.answerConsumptionRequests = try Parse.onOff(answer, "--answer-consumption-requests")
        }
        request.connection.consumptionRefundPreference = try arguments.option("--consumption-refund-preference").map { text in
            guard ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"].contains(text) else {
                throw UsageError("--consumption-refund-preference must be DECLINE, GRANT_FULL or GRANT_PRORATED, "
                    + "got \(Parse.quoted(text))")
            }
            return text
        }
        try arguments.finish()
        return request
    }

    /// The App Store Server API key: a PKCS#8 PEM holding a P-256 key, as App Store Connect's `.p8`
    /// download does. Stored re-encoded by OpenSSL, so nothing but the key itself is kept.
    private static func applePrivateKey(file: String?, variable: String?, environment: Environment) throws -> String {
        let pem: String
        let source: String
        switch (file, variable) {
        case (let path?, nil):
            pem = String(decoding: try Parse.file(path, "private key", limit: maxPrivateKeyBytes), as: UTF8.self)
            source = "private key file \(Parse.redacted(path) ?? path)"
        case (nil, let name?):
            guard let value = environment.string(name) else {
                throw UsageError("--private-key-env: environment variable \(Parse.quoted(name)) is not set")
            }
            guard value.utf8.count <= maxPrivateKeyBytes else {
                throw UsageError("--private-key-env: \(name) is larger than \(maxPrivateKeyBytes) bytes")
            }
            pem = value
            source = "environment variable \(name)"
        case (nil, nil): throw UsageError("--private-key FILE or --private-key-env VAR is required")
        case (_?, _?): throw UsageError("give --private-key FILE or --private-key-env VAR, not both")
        }
        guard pem.contains("-----BEGIN PRIVATE KEY-----") else {
            throw UsageError("\(source) is not a PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----) like App Store Connect's .p8")
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: pem)
        } catch {
            throw UsageError("\(source) is not a readable unencrypted PEM private key")
        }
        guard key.kind == .ecP256 else {
            throw UsageError("\(source) holds an \(key.kind) key; App Store Server API keys are EC P-256")
        }
        return try key.pem()
    }

    static func baseURL(_ text: String, option: String = "--api-base-url") throws -> String {
        guard text.utf8.count <= 2000, Parse.matches(text, "https?://[^\\s/?#]+[^\\s]*"),
              let url = URL(string: text), url.host != nil else {
            throw UsageError("\(option) must be an http:// or https:// URL of at most 2000 bytes, got \(Parse.quoted(text))")
        }
        guard url.user == nil, url.password == nil else {
            throw UsageError("\(option) must not carry a user name or password (connections show prints the URL)")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    /// A Production connection's calls carry signed API tokens and service-account assertions, and its answers
    /// decide what customers are billed: plain http:// is refused except to this machine (a local simulator).
    /// Sandbox connections may reach a simulator elsewhere, such as another container.
    static func encrypted(_ request: Request) throws -> Request {
        guard request.connection.environment == .production else { return request }
        let urls = [("--api-base-url", request.connection.apiBaseURL),
                    ("--sandbox-api-base-url", request.connection.sandboxAPIBaseURL), ("--token-uri", request.connection.apiTokenURI),
                    ("--jwks-url", request.connection.pushJWKSURL)]
        for case let (option, text?) in urls {
            guard let url = URL(string: text), url.scheme == "http" else { continue }
            let host = (url.host ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
            guard host == "localhost" || host == "::1" || host.hasPrefix("127.") else {
                throw UsageError("\(option) must be https:// for a Production connection (http:// only to this machine), "
                                 + "got \(Parse.quoted(text))")
            }
        }
        return request
    }

    /// Every certificate of every file, re-encoded as PEM; `nil` when none was given.
    private static func roots(_ paths: [String]) throws -> String? {
        guard !paths.isEmpty else { return nil }
        var pem = ""
        for path in paths {
            let data = try Parse.file(path, "root", limit: maxRootsBytes)
            do {
                pem += try Certificate.load(data).map(\.pem).joined()
            } catch {
                throw UsageError("root file \(path) holds no readable certificate (PEM or DER)")
            }
        }
        guard pem.utf8.count <= maxRootsBytes else { throw UsageError("--root certificates exceed \(maxRootsBytes) bytes in all") }
        return pem
    }

    private static func add(_ request: Request, json: Bool, environment: Environment) async throws -> Int32 {
        let added = try await environment.withPool { pool in
            var resolved = request.connection
            resolved.accountID = try await request.account.resolve(on: pool)
            let new = resolved
            let duplicate = "account \(new.accountID) already has a \(new.environment.rawValue) \(new.store.rawValue) "
                + "connection for \(new.appIdentifier)"
            return try await SetupError.duplicate(duplicate) {
                try await pool.transaction { db in
                    try ConnectionSettings.get(id: Catalog.addConnection(new, on: db).id, on: db)
                }
            }
        }
        guard let added else { throw SetupError(.notFound, "the connection added is not there to read back") }
        Output.print(json ? Output.Value.object([("id", .int(Int(added.connection.id))),
                                                 ("require_issued_tokens", .bool(added.connection.requireIssuedTokens))]).text
                          : "connection \(added.connection.id) added: \(describe(added))")
        return 0
    }

    private static func list(json: Bool, environment: Environment) async throws -> Int32 {
        let connections = try await environment.withPool { pool in
            try await pool.withConnection { db in try await ConnectionSettings.list(on: db) }
        }
        if json {
            Output.print(Output.Value.array(connections.map(details)).text)
        } else {
            Output.print(connections.isEmpty ? "no connections" : Output.table(
                ["ID", "ACCOUNT", "STORE", "APP", "ENVIRONMENT", "FLAGS"],
                connections.map { [String($0.connection.id), String($0.connection.accountID), $0.connection.store.rawValue,
                                   $0.connection.appIdentifier, $0.connection.environment.rawValue, flags($0)] }))
        }
        return 0
    }

    private static func show(id: Int64, environment: Environment) async throws -> Int32 {
        let found = try await environment.withPool { pool in
            try await pool.withConnection { db in try await ConnectionSettings.get(id: id, on: db) }
        }
        guard let found else { throw SetupError(.notFound, "no connection \(id)") }
        Output.print(details(found).text)
        return 0
    }

    /// Everything about a connection except its secret, which is only said to be there or not.
    private static func details(_ settings: ConnectionSettings) -> Output.Value {
        let connection = settings.connection
        let roots = settings.trustedRootsPEM.map { pem in
            guard let certificates = try? Certificate.load(Data(pem.utf8)) else { return Output.Value.string("(unreadable PEM)") }
            return Output.Value.array(certificates.map { .string($0.subject) })
        }
        return .object([
            ("id", .int(Int(connection.id))), ("account_id", .int(Int(connection.accountID))),
            ("store", .string(connection.store.rawValue)), ("app_identifier", .string(connection.appIdentifier)),
            ("app_apple_id", connection.appAppleID.map { .int(Int($0)) } ?? .null),
            ("environment", .string(connection.environment.rawValue)),
            ("require_issued_tokens", .bool(connection.requireIssuedTokens)),
            ("answer_consumption_requests", .bool(connection.answerConsumptionRequests)),
            ("consumption_refund_preference", connection.consumptionRefundPreference.map { .string($0) } ?? .null),
            ("api_key_id", settings.apiKeyID.map { .string($0) } ?? .null),
            ("api_issuer_id", settings.apiIssuerID.map { .string($0) } ?? .null),
            ("api_private_key", .string(settings.hasPrivateKey ? "(set)" : "(not set)")),
            ("api_base_url", settings.apiBaseURL.map { .string($0) } ?? .null),
            ("sandbox_api_base_url", settings.sandboxAPIBaseURL.map { .string($0) } ?? .null),
            ("trusted_roots", roots ?? .null),
            ("api_client_email", settings.apiClientEmail.map { .string($0) } ?? .null),
            ("api_token_uri", settings.apiTokenURI.map { .string($0) } ?? .null),
            ("push_audience", settings.pushAudience.map { .string($0) } ?? .null),
            ("push_service_account", settings.pushServiceAccount.map { .string($0) } ?? .null),
            ("push_jwks_url", settings.pushJWKSURL.map { .string($0) } ?? .null),
        ])
    }

    private static func describe(_ settings: ConnectionSettings) -> String {
        let connection = settings.connection
        return "\(connection.store.rawValue) \(connection.appIdentifier) \(connection.environment.rawValue) for account "
            + "\(connection.accountID) [\(flags(settings))]"
    }

    /// The settings that change behaviour, in one table cell.
    private static func flags(_ settings: ConnectionSettings) -> String {
        let connection = settings.connection
        var flags: [String] = []
        if connection.requireIssuedTokens { flags.append("issued-tokens-only") }
        if connection.answerConsumptionRequests {
            flags.append("answers-consumption" + (connection.consumptionRefundPreference.map { "(\($0))" } ?? ""))
        }
        if settings.hasPrivateKey { flags.append("api-key") }
        if settings.apiBaseURL != nil { flags.append("custom-api") }
        if settings.trustedRootsPEM != nil { flags.append("custom-roots") }
        return flags.isEmpty ? "-" : flags.joined(separator: ",")
    }
}
