import Accounts
import AppStore
import Crypto
import Foundation
import GooglePlay
import Postgres
import Simulator
import StoreModel

/// A store simulator wired to a fresh account and connection, with live purchases the mirror already
/// knows — what the resync benchmark re-fetches.
struct BenchStores: Sendable {
    let connection: StoreConnection
    /// Stops the simulator.
    let stop: @Sendable () async -> Void

    static func seed(_ store: Store, purchases: Int, pool: PostgresPool) async throws -> BenchStores {
        let host = "bench-\(UUID().uuidString.prefix(8).lowercased()).invalid"
        let product = "bench.monthly"
        let (accountID, priceID) = try await pool.transaction { db in
            let accountID: Int64 = try db.query("INSERT INTO accounts (host) VALUES ($1) RETURNING id", [host])[0].decode(0)
            let price = try Catalog.addPlanPrice(accountID: accountID, planCode: "bench", priceCode: "monthly",
                                                 amount: Money(minorUnits: 999, currency: "USD"), on: db)
            return (accountID, price)
        }
        var new = Catalog.NewConnection(accountID: accountID, store: store, appIdentifier: "com.example.bench",
                                        environment: .production)
        var lineages: [String] = []
        let stop: @Sendable () async -> Void
        switch store {
        case .apple:
            let key = try PrivateKey.generate(.ecP256)
            let app = SimulatedApp(bundleID: "com.example.bench", appAppleID: 1, environment: .production,
                                   apiKey: SimulatedAPIKey(keyID: "BENCH", issuerID: "bench", publicKey: key.publicKey))
            let simulator = try AppStoreSimulator(configuration: SimulatorConfiguration(apps: [app]))
            for _ in 0..<purchases {
                lineages.append(try await simulator.subscribe(productId: product, price: 9_990, currency: "USD", silent: true)
                    .originalTransactionId)
            }
            new.appAppleID = 1
            new.apiKeyID = "BENCH"
            new.apiIssuerID = "bench"
            new.apiPrivateKeyPEM = try key.pem()
            new.apiBaseURL = simulator.baseURL
            new.trustedRootsPEM = simulator.rootCertificate.pem
            stop = { await simulator.stop() }
        case .google:
            let key = try PrivateKey.generate(.rsa(bits: 2048))
            let email = "bench@storesync-bench.iam.gserviceaccount.com"
            let play = try PlaySimulator(configuration: PlaySimulatorConfiguration(
                apps: [SimulatedPlayApp(packageName: "com.example.bench")],
                serviceAccount: SimulatedServiceAccount(clientEmail: email, publicKey: key.publicKey)))
            for _ in 0..<purchases {
                let token = try await play.purchase(productId: product, basePlanId: "monthly", price: 999, currency: "USD",
                                                    silent: true).purchaseToken
                guard let token else { throw BenchError("the Play simulator returned no purchase token") }
                lineages.append(token)
            }
            new.apiClientEmail = email
            new.apiPrivateKeyPEM = try key.pem()
            new.apiTokenURI = play.tokenURI
            new.apiBaseURL = play.baseURL
            new.pushAudience = "https://\(host)/webhook/google-play"
            new.pushServiceAccount = email
            new.pushJWKSURL = play.certificatesURL
            stop = { await play.stop() }
        }
        let connectionRequest = new
        let known = lineages
        let connection = try await pool.transaction { db in
            let connection = try Catalog.addConnection(connectionRequest, on: db)
            try Catalog.mapProduct(connectionID: connection.id, productID: product,
                                   basePlanID: store == .google ? "monthly" : nil, planPriceID: priceID, on: db)
            // As mirrored a day ago: the resync's answers are newer.
            _ = try db.query("""
                WITH p AS (
                    INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, base_plan_id,
                                                 store_state, expires_at, snapshot, as_of)
                    SELECT $1, lineage, 'Production', $3, $4, 'active', now() + interval '20 days', '{}',
                           now() - interval '1 day'
                    FROM unnest($2::text[]) AS l(lineage)
                    RETURNING id, lineage
                )
                INSERT INTO purchase_tokens (connection_id, purchase_token, purchase_id)
                SELECT $1, lineage, id FROM p WHERE $5
                """, [connection.id, PostgresArray(known), product, store == .google ? "monthly" : nil, store == .google])
            return connection
        }
        return BenchStores(connection: connection, stop: stop)
    }
}
