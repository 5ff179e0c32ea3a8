import AppStore
import Crypto
import Foundation
import HTTP
import Mirror
import Queue
import StoreModel
import Synchronization

/// Verifiers and API clients per Apple store connection, built once and kept while the connection's settings
/// stay the same: a verifier's chain cache and a client's bearer token and rate limiter only pay off when they
/// live across jobs. A connection whose settings changed gets fresh ones on its next job.
final class AppleConnectionRegistry: Sendable {
    final class Tools: Sendable {
        let connection: StoreConnection
        let roots: [Certificate]
        let client: AppStoreAPIClient
        /// Verifies what the connection's own environment signs: notifications, and the transactions and
        /// renewal info the API answers with.
        let verifier: SignedDataVerifier
        /// The other real environment's verifier, built for a notification that is then skipped as a mismatch.
        /// Its App Apple ID comes from the notification's claims (a connection knows its own only for its own
        /// environment), so it is kept only once a notification verified with it: a forged payload cannot
        /// plant one, and a different claim builds a new one instead of failing genuine notifications.
        private let otherVerifier = Mutex<SignedDataVerifier?>(nil)

        init(connection: StoreConnection, roots: [Certificate], client: AppStoreAPIClient, verifier: SignedDataVerifier) {
            self.connection = connection
            self.roots = roots
            self.client = client
            self.verifier = verifier
        }

        /// Verifies a notification with the verifier of the environment it claims — only Production or
        /// Sandbox; any other name goes to the connection's own verifier, which refuses it.
        func verifyNotification(_ jws: String, claims: NotificationRouting) throws -> NotificationPayload {
            guard let claimed = claims.environment, claimed != verifier.environment,
                  claimed == .production || claimed == .sandbox else {
                return try verifier.verifyNotification(jws)
            }
            let appAppleID = claimed == .production ? (connection.appAppleID ?? claims.appAppleID) : connection.appAppleID
            if let other = otherVerifier.withLock({ $0 }), other.environment == claimed, other.appAppleID == appAppleID {
                return try other.verifyNotification(jws)
            }
            let candidate = try SignedDataVerifier(roots: roots, bundleID: connection.appIdentifier, appAppleID: appAppleID,
                                                   environment: claimed)
            let payload = try candidate.verifyNotification(jws)
            otherVerifier.withLock { $0 = candidate }
            return payload
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

    func tools(for connection: StoreConnection) throws -> Tools {
        try cache.value(for: connection, build: build)
    }

    private func build(_ connection: StoreConnection) throws -> Tools {
        let roots: [Certificate]
        if let pem = connection.trustedRootsPEM {
            do {
                roots = try Certificate.load(Data(pem.utf8))
            } catch {
                throw JobFailure.permanent("connection \(connection.id): its trusted roots do not parse: \(error)")
            }
        } else {
            roots = [AppleRoots.rootCAG3]
        }
        guard let keyID = connection.apiKeyID, let issuerID = connection.apiIssuerID, let keyPEM = connection.apiPrivateKeyPEM else {
            throw JobFailure.permanent("connection \(connection.id) has no App Store Server API key (key id, issuer id, private key)")
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: keyPEM)
        } catch {
            throw JobFailure.permanent("connection \(connection.id): its API private key does not load: \(error)")
        }
        let environment = AppStoreEnvironment(rawValue: connection.environment.rawValue)
        let verifier: SignedDataVerifier
        do {
            verifier = try SignedDataVerifier(roots: roots, bundleID: connection.appIdentifier,
                                              appAppleID: connection.appAppleID, environment: environment)
        } catch {
            // A setting the connection lacks (a Production connection without its App Apple ID): retrying
            // cannot supply it.
            throw JobFailure.permanent("connection \(connection.id): \(error)")
        }
        var configuration = AppStoreAPIConfiguration(environment: connection.environment, bundleID: connection.appIdentifier,
                                                     keyID: keyID, issuerID: issuerID, privateKey: key,
                                                     baseURL: connection.apiBaseURL)
        configuration.rateLimits = configuration.rateLimits.scaled(by: rateLimitShare)
        configuration.maxHistoryPages = historyPages
        let client: AppStoreAPIClient
        var observe: (@Sendable (AppStoreAPICall) -> Void)?
        if let metrics { observe = { call in metrics.record(call) } }
        do {
            client = try AppStoreAPIClient(configuration: configuration, verifier: verifier, httpClient: http,
                                           observe: observe)
        } catch {
            throw JobFailure.permanent("connection \(connection.id): \(error)")
        }
        return Tools(connection: connection, roots: roots, client: client, verifier: verifier)
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
