import Foundation
import HTTP
import Metrics
import Migrations
import Postgres

/// `/healthz`, `/readyz` and `/metrics`, served by both `storesync serve` and `storesync work` so an
/// orchestrator and Prometheus treat every process the same way.
public enum OperationsEndpoints {
    /// - `/healthz`: the process is alive and answering (never touches the database, so a database outage
    ///   does not get healthy processes restarted).
    /// - `/readyz`: the process has finished starting (`started`: for `serve`, it stores webhooks) and the
    ///   database is reachable with the schema this build expects. Ready before started, a caller's first
    ///   request could meet the 503 of a process still opening.
    /// - `/metrics`: Prometheus text.
    public static func install(into router: inout HTTPRouter, pool: PostgresPool, metrics: MetricsRegistry,
                               started: @escaping @Sendable () -> Bool = { true }) {
        router.route("GET", "/healthz") { _ in .json(200, #"{"status":"ok"}"#) }
        router.route("GET", "/readyz") { _ in
            guard started() else { return .error(503, "not ready: starting") }
            do {
                try await pool.withConnection { try await Migrator().requireCurrent($0) }
                return .json(200, #"{"status":"ready"}"#)
            } catch {
                return .error(503, "not ready: \(error)")
            }
        }
        router.route("GET", "/metrics") { _ in
            HTTPResponse(status: 200, headers: [("content-type", MetricsRegistry.contentType)],
                         body: Data(metrics.render().utf8))
        }
    }
}
