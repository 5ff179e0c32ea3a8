import Accounts
import Crypto
import Foundation
import GooglePlay
import HTTP
import Logging
import Postgres
import Queue

/// The Play Developer API client and the push-token verifier of each Google store connection, kept while
/// the connection's settings stay the same: the client holds the shared OAuth access token and the quota
/// pacing, the verifier Google's cached signing keys.
final class GoogleStoreClients: Sendable {
    final class Tools: Sendable {
        let connection: StoreConnection
        let client: GooglePlayAPIClient
        /// The client's order reads of all jobs at once, merged into `orders.batchGet` requests.
        let orders: GooglePlayOrderBatcher
        let pushVerifier: PushTokenVerifier
        private let metrics: SyncMetrics?

        init(connection: StoreConnection, client: GooglePlayAPIClient, pushVerifier: PushTokenVerifier,
             metrics: SyncMetrics?) {
            self.connection = connection
            self.client = client
            orders = GooglePlayOrderBatcher(client: client)
            self.pushVerifier = pushVerifier
            self.metrics = metrics
        }

        /// The queue's decision for a failed call of this connection's client (`StoreFailures.api`). A refused
        /// service account is retried for days rather than dead-lettered, so it must not stay quiet meanwhile:
        /// every refusal is logged at error level with the Play Console hint and counted in
        /// `storesync_store_permission_denied_total`, the signal to alert on.
        func failure(_ error: GooglePlayAPIError, previous: String?, logger: Logger) -> JobFailure {
            if StoreFailures.isPermissionDenied(error) {
                metrics?.permissionDenied(store: "google", connectionID: connection.id)
                logger.error("Google refused the service account; the job retries, but only a Play Console fix helps", [
                    "connection_id": .int(Int(connection.id)), "error": .string(error.description),
                ])
            }
            return StoreFailures.api(error, previous: previous)
        }
    }

    private let http: HTTPClient
    private let rateLimitShare: Double
    private let metrics: SyncMetrics?
    private let cache = ConnectionCache<Tools>()
    private let keyCaches: GoogleKeyCaches

    init(http: HTTPClient, rateLimitShare: Double, metrics: SyncMetrics?) {
        self.http = http
        self.rateLimitShare = rateLimitShare
        self.metrics = metrics
        keyCaches = GoogleKeyCaches(http: http)
    }

    /// The connection's tools; its credentials are read only when this process has none for its settings
    /// revision yet.
    func tools(for connection: StoreConnection, pool: PostgresPool) async throws -> Tools {
        try await cache.value(for: connection, credentials: StoreCredentials.google(of: connection), pool: pool, build: build)
    }

    private func build(_ connection: StoreConnection, _ credentials: GoogleCredentials) throws -> Tools {
        guard let email = credentials.clientEmail, let pem = credentials.privateKeyPEM else {
            throw JobFailure.permanent("connection \(connection.id) has no Play Developer API service account")
        }
        guard let audience = credentials.pushAudience, let pushAccount = credentials.pushServiceAccount else {
            throw JobFailure.permanent("connection \(connection.id) has no push audience / push service account to "
                                       + "authenticate Pub/Sub pushes with")
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: pem)
        } catch {
            throw JobFailure.permanent("connection \(connection.id): its service-account key does not load: \(error)")
        }
        var configuration = GooglePlayAPIConfiguration(packageName: connection.appIdentifier, clientEmail: email,
                                                       privateKey: key, tokenURI: credentials.tokenURI,
                                                       baseURL: credentials.baseURL)
        configuration.rateLimits = configuration.rateLimits.scaled(by: rateLimitShare)
        var observe: (@Sendable (GooglePlayAPICall) -> Void)?
        if let metrics { observe = { call in metrics.record(call) } }
        let client: GooglePlayAPIClient
        do {
            client = try GooglePlayAPIClient(configuration: configuration, httpClient: http, observe: observe)
        } catch {
            throw JobFailure.permanent("connection \(connection.id): \(error)")
        }
        let keys = keyCaches.cache(for: credentials.pushJWKSURL)
        return Tools(connection: connection, client: client,
                     pushVerifier: PushTokenVerifier(audience: audience, serviceAccountEmail: pushAccount, keys: keys),
                     metrics: metrics)
    }
}
