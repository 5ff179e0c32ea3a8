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
    /// - `/readyz`: the database is reachable and its schema matches this build.
    /// - `/metrics`: Prometheus text.
    public static func install(into router: inout HTTPRouter, pool: PostgresPool, metrics: MetricsRegistry) {
        router.route("GET", "/healthz") { _ in .text(200, "ok\n") }
        router.route("GET", "/readyz") { _ in
            do {
                try await pool.withConnection { try await Migrator().requireCurrent($0) }
                return .text(200, "ready\n")
            } catch {
                return .text(503, "not ready: \(error)\n")
            }
        }
        router.route("GET", "/metrics") { _ in
            HTTPResponse(status: 200, headers: [("content-type", MetricsRegistry.contentType)],
                         body: Data(metrics.render().utf8))
        }
    }
}
