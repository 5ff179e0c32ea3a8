import AppStore
import GooglePlay
import Metrics

/// What on-call watches on the store side: API answers by endpoint and status class (a wave of 401s means a
/// revoked key, 429s a budget problem), their latency, calls refused for missing permissions (jobs that retry
/// for days until someone fixes Play Console), and notifications refused by verification (a forged sender, or a
/// misconfigured root or bundle id when they all fail).
final class SyncMetrics: Sendable {
    private let requests: Counter
    private let latency: Histogram
    private let verificationFailures: Counter
    private let drifts: Counter
    private let permissionDenials: Counter

    init(registry: MetricsRegistry) {
        requests = registry.counter("storesync_store_api_requests_total", help: "Store API requests by answer class.",
                                    labels: ["store", "endpoint", "status"])
        latency = registry.histogram("storesync_store_api_duration_seconds", help: "Store API request latency.",
                                     labels: ["store", "endpoint"])
        verificationFailures = registry.counter("storesync_verification_failures_total",
                                                help: "Store notifications refused by signature or token verification.",
                                                labels: ["store", "code"])
        drifts = registry.counter("storesync_resync_drift_total",
                                  help: "Changes a resync found that no notification had delivered (lost notifications).",
                                  labels: ["connection", "kind"])
        permissionDenials = registry.counter("storesync_store_permission_denied_total",
                                             help: "Store calls refused because the store does not (yet) grant the "
                                                 + "service account access; their jobs retry for days.",
                                             labels: ["store", "connection"])
    }

    func record(_ call: AppStoreAPICall) {
        let status = call.status.map { "\($0 / 100)xx" } ?? "no answer"
        requests.increment(by: 1, "apple", call.family.rawValue, status)
        latency.observe(call.duration, "apple", call.family.rawValue)
    }

    func record(_ call: GooglePlayAPICall) {
        let status = call.status.map { "\($0 / 100)xx" } ?? "no answer"
        requests.increment(by: 1, "google", call.family.rawValue, status)
        latency.observe(call.duration, "google", call.family.rawValue)
    }

    func drift(connectionID: Int64, kind: String) {
        drifts.increment(by: 1, String(connectionID), kind)
    }

    func permissionDenied(store: String, connectionID: Int64) {
        permissionDenials.increment(by: 1, store, String(connectionID))
    }

    func verificationFailed(store: String, code: String) {
        verificationFailures.increment(by: 1, store, code)
    }
}
