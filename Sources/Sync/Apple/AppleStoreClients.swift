import AppStore
import Crypto
import Foundation
import HTTP
import Accounts
import Postgres
import Queue
import StoreModel

/// Verifiers and API clients per Apple store connection, built once and kept while the connection's settings
/// stay the same: a verifier's chain cache and a client's bearer token and rate limiter only pay off when they
/// live across jobs. A connection whose settings changed gets fresh ones on its next job.
final class AppleStoreClients: Sendable {
    final class Tools: Sendable {
        let connection: StoreConnection
        let client: AppStoreAPIClient
        /// A Production connection's client for Apple's Sandbox, with the same key: where a purchase a backend
        /// registers that Production does not know is looked up, to be refused as a sandbox purchase.
        let sandboxClient: AppStoreAPIClient?
        /// Verifies the connection's notifications in either environment (`NotificationVerifier`).
        let notifications: NotificationVerifier
        /// Verifies what the connection's own environment signs: notifications, and the transactions and
        /// renewal info the API answers with.
        var verifier: SignedDataVerifier { notifications.own }

        init(connection: StoreConnection, client: AppStoreAPIClient, sandboxClient: AppStoreAPIClient?,
             notifications: NotificationVerifier) {
            self.connection = connection
            self.client = client
            self.sandboxClient = sandboxClient
            self.notifications = notifications
        }

        func verifyNotification(_ jws: String, claims: NotificationRouting) throws -> NotificationPayload {
            try notifications.verify(jws, claims: claims)
        }
    }

    private let http: HTTPClient
    private let rateLimitShare: Double
    private let historyPages: Int
    private let metrics: SyncMetrics?
    private let cache = ConnectionCache<Tools>()

    /// - Parameter rateLimitShare: the share of Apple's published per-endpoint limits this process may use.
    /// - Parameter historyPages: the pages of transaction history one call reads (`maxHistoryPages`).
    init(http: HTTPClient, rateLimitShare: Double, historyPages: Int, metrics: SyncMetrics?) {
        self.http = http
        self.rateLimitShare = rateLimitShare
        self.historyPages = historyPages
        self.metrics = metrics
    }

    /// The connection's tools; its credentials are read only when this process has none for its settings
    /// revision yet.
    func tools(for connection: StoreConnection, pool: PostgresPool) async throws -> Tools {
        try await cache.value(for: connection, credentials: StoreCredentials.apple(of: connection), pool: pool, build: build)
    }

    private func build(_ connection: StoreConnection, _ credentials: AppleCredentials) throws -> Tools {
        let roots: [Certificate]
        do {
            roots = try AppleRoots.trusted(pem: credentials.trustedRootsPEM)
        } catch {
            throw JobFailure.permanent("connection \(connection.id): its trusted roots do not parse: \(error)")
        }
        guard let keyID = credentials.keyID, let issuerID = credentials.issuerID, let keyPEM = credentials.privateKeyPEM else {
            throw JobFailure.permanent("connection \(connection.id) has no App Store Server API key (key id, issuer id, private key)")
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: keyPEM)
        } catch {
            throw JobFailure.permanent("connection \(connection.id): its API private key does not load: \(error)")
        }
        let environment = AppStoreEnvironment(rawValue: connection.environment.rawValue)
        let notifications: NotificationVerifier
        do {
            notifications = try NotificationVerifier(roots: roots, bundleID: connection.appIdentifier,
                                                     appAppleID: connection.appAppleID, environment: environment)
        } catch {
            // A setting the connection lacks (a Production connection without its App Apple ID): retrying
            // cannot supply it.
            throw JobFailure.permanent("connection \(connection.id): \(error)")
        }
        var configuration = AppStoreAPIConfiguration(environment: connection.environment, bundleID: connection.appIdentifier,
                                                     keyID: keyID, issuerID: issuerID, privateKey: key,
                                                     baseURL: credentials.baseURL)
        configuration.rateLimits = configuration.rateLimits.scaled(by: rateLimitShare)
        configuration.maxHistoryPages = historyPages
        let client: AppStoreAPIClient
        var sandboxClient: AppStoreAPIClient?
        var observe: (@Sendable (AppStoreAPICall) -> Void)?
        if let metrics { observe = { call in metrics.record(call) } }
        do {
            client = try AppStoreAPIClient(configuration: configuration, verifier: notifications.own, httpClient: http,
                                           observe: observe)
            // Apple's own sandbox only for a connection that talks to Apple: one pointed at a simulator or proxy
            // never sends its key to Apple unless told where.
            let sandboxURL = credentials.sandboxBaseURL
                ?? (credentials.baseURL == nil ? AppStoreAPIConfiguration.sandboxURL : nil)
            if connection.environment == .production, let sandboxURL {
                var sandbox = configuration
                sandbox.environment = .sandbox
                sandbox.baseURL = sandboxURL
                let verifier = try SignedDataVerifier(roots: roots, bundleID: connection.appIdentifier, appAppleID: nil,
                                                      environment: .sandbox)
                sandboxClient = try AppStoreAPIClient(configuration: sandbox, verifier: verifier, httpClient: http,
                                                      observe: observe)
            }
        } catch {
            throw JobFailure.permanent("connection \(connection.id): \(error)")
        }
        return Tools(connection: connection, client: client, sandboxClient: sandboxClient, notifications: notifications)
    }
}

extension AppStoreRateLimits {
    /// These limits times `share`, rounded down so that processes splitting a limit never exceed it together,
    /// but at least one request per second each.
    func scaled(by share: Double) -> AppStoreRateLimits {
        func scale(_ limit: Limit) -> Limit {
            Limit(perSecond: max(1, Int((Double(limit.perSecond) * share).rounded(.down))),
                  burst: max(1, Int((Double(limit.burst) * share).rounded(.down))))
        }
        return AppStoreRateLimits(subscriptionStatuses: scale(subscriptionStatuses),
                                  transactionHistory: scale(transactionHistory), consumption: scale(consumption),
                                  notificationHistory: scale(notificationHistory), maximumWait: maximumWait)
    }
}
