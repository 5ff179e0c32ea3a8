import API
import HTTP
import Metrics
import Postgres
import Sync

/// The Mobile Stores API as `serve` runs it beside the webhooks: a pool of its own, logged in as a member of
/// `storesync_api` (the webhooks' role may only enqueue), and an HTTP client for the store calls purchase
/// registration makes.
struct APIFace {
    let pool: PostgresPool
    let service: MobileStoresAPI
    private let http: HTTPClient

    init(url: String, poolSize: Int, tokenLifetime: Duration, rateShare: Double, clientAddresses: ClientAddressRule,
         metrics: MetricsRegistry) throws {
        var configuration = PostgresConfiguration(url: url, poolSize: poolSize, applicationName: "storesync-api")
        configuration.acquireTimeout = .seconds(2)
        configuration.statementTimeout = .seconds(5)
        pool = PostgresPool(configuration)
        http = try HTTPClient()
        service = MobileStoresAPI(pool: pool, registrar: PurchaseRegistrar(http: http, rateLimitShare: rateShare),
                                  metrics: metrics, tokenLifetime: tokenLifetime, clientAddresses: clientAddresses,
                                  accepting: false)
    }

    /// After the server has stopped.
    func close() async {
        await http.shutdown()
        await pool.close()
    }
}
