import AppStore
import HTTP
import Metrics
import Queue
import Worker

/// The store job kinds a worker process runs (their args are declared in `SyncJobs.swift` and `IngestJobs`), wired to one shared HTTP client (one libcurl multi thread
/// for every store call of the process).
public enum SyncHandlers {
    public struct Configuration: Sendable {
        /// The share of each store's published rate limits one worker process may use: with N worker
        /// processes against the same store accounts, 1/N keeps them together under the limit.
        public var rateLimitShare: Double = 1.0
        /// How the daily resync and `storesync sync` spread their work.
        public var resync = ResyncSettings()
        /// Pages of Apple transaction history one job reads (`AppStoreAPIConfiguration.maxHistoryPages`); a
        /// longer history is read on by follow-up resyncs, so no job holds a worker for minutes.
        public var appleHistoryPages = AppStoreAPIConfiguration.defaultMaxHistoryPages

        public init() {}
    }

    /// The schedules a worker process claims periods of.
    public static let schedules = [DailySyncHandler.schedule, ReconcileHandler.schedule]

    /// - Parameter metrics: where store API and verification metrics go (`/metrics`); none in tests that do not look.
    public static func register(into handlers: inout JobHandlers, http: HTTPClient,
                                configuration: Configuration = Configuration(), metrics: MetricsRegistry? = nil) {
        let syncMetrics = metrics.map(SyncMetrics.init(registry:))
        let apple = AppleStoreClients(http: http, rateLimitShare: configuration.rateLimitShare,
                                      historyPages: configuration.appleHistoryPages, metrics: syncMetrics)
        handlers.register(AppleNotificationHandler(clients: apple, consumption: AppleConsumptionScheduler(), metrics: syncMetrics))
        handlers.register(AppleConsumptionHandler(clients: apple))
        handlers.register(AppleResyncHandler(clients: apple, metrics: syncMetrics))
        handlers.register(AppleSweepHandler(clients: apple))
        let google = GoogleStoreClients(http: http, rateLimitShare: configuration.rateLimitShare, metrics: syncMetrics)
        handlers.register(GoogleNotificationHandler(clients: google, metrics: syncMetrics))
        handlers.register(GoogleAcknowledgeHandler(clients: google))
        handlers.register(GoogleResyncHandler(clients: google, metrics: syncMetrics))
        handlers.register(GoogleSweepHandler(clients: google))
        handlers.register(DailySyncHandler(settings: configuration.resync))
        handlers.register(ReconcileHandler())
        handlers.register(OutageSweepHandler())
    }
}
