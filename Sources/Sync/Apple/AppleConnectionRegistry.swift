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
        /// Verifiers by the environment they accept; the connection's own, plus the other one built on demand
        /// to verify (then skip) a notification from the wrong environment.
        private let verifiers: Mutex<[String: SignedDataVerifier]>

        init(connection: StoreConnection, roots: [Certificate], client: AppStoreAPIClient, verifier: SignedDataVerifier) {
            self.connection = connection
            self.roots = roots
            self.client = client
            verifiers = Mutex([verifier.environment.rawValue: verifier])
        }

        func verifier(for environment: AppStoreEnvironment, claimedAppAppleID: Int64?) throws -> SignedDataVerifier {
            if let verifier = verifiers.withLock({ $0[environment.rawValue] }) { return verifier }
            // A connection's App Apple ID is known only for production; for a production notification on a
            // sandbox connection (which is skipped anyway) the claimed one is checked against the signed payload.
            let appAppleID = environment == .production ? (connection.appAppleID ?? claimedAppAppleID) : connection.appAppleID
            let verifier = try SignedDataVerifier(roots: roots, bundleID: connection.appIdentifier, appAppleID: appAppleID,
                                                  environment: environment)
            verifiers.withLock { $0[environment.rawValue] = verifier }
            return verifier
        }
    }

    private let http: HTTPClient
    private let rateLimitShare: Double
    private let metrics: SyncMetrics?
    private let cache = ConnectionCache<Tools>()

    /// - Parameter rateLimitShare: the share of Apple's published per-endpoint limits this process may use.
    init(http: HTTPClient, rateLimitShare: Double, metrics: SyncMetrics?) {
        self.http = http
        self.rateLimitShare = rateLimitShare
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
        let verifier = try SignedDataVerifier(roots: roots, bundleID: connection.appIdentifier,
                                              appAppleID: connection.appAppleID, environment: environment)
        var configuration = AppStoreAPIConfiguration(environment: connection.environment, bundleID: connection.appIdentifier,
                                                     keyID: keyID, issuerID: issuerID, privateKey: key,
                                                     baseURL: connection.apiBaseURL)
        configuration.rateLimits = configuration.rateLimits.scaled(by: rateLimitShare)
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
    /// These limits times `share`, at least one request per second each.
    func scaled(by share: Double) -> AppStoreRateLimits {
        func scale(_ limit: Limit) -> Limit {
            Limit(perSecond: max(1, Int((Double(limit.perSecond) * share).rounded())),
                  burst: max(1, Int((Double(limit.burst) * share).rounded())))
        }
        return AppStoreRateLimits(subscriptionStatuses: scale(subscriptionStatuses),
                                  transactionHistory: scale(transactionHistory), consumption: scale(consumption),
                                  notificationHistory: scale(notificationHistory), maximumWait: maximumWait)
    }
}
