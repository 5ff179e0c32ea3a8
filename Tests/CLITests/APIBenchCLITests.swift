import Foundation
import Postgres
import TestSupport
import Testing

/// `storesync-dev bench api --app`: every backend and app read it drove was answered 2xx, its registrations were mirrored and linked,
/// and it reports the figures it names. Speed is the benchmark's to measure, not this test's.
@Suite struct APIBenchCLITests {
    @Test func readsAndRegistersThroughTheAPIAndReportsItsFigures() async throws {
        try await TestDatabase.with { database in
            let result = try await ChildProcess.run("storesync-dev", ["bench", "api", "--seconds", "1", "--customers", "20",
                                                                  "--connections", "4", "--registrations-per-sec", "5", "--app"],
                                                    environment: ["DATABASE_URL": database.url, "STORESYNC_LOG_LEVEL": "error"],
                                                    timeout: .seconds(120))
            #expect(result.status == 0, "\(result.stderr.suffix(2000))")
            let figures = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                                       "not a JSON object: \(result.stdout)")
            let reads = try #require(figures["entitlement_reads"] as? [String: Any])
            #expect((reads["requests"] as? Int ?? 0) > 0)
            #expect(reads["non_2xx"] as? Int == 0)
            let appReads = try #require(figures["app_entitlement_reads"] as? [String: Any])
            #expect((appReads["requests"] as? Int ?? 0) > 0)
            #expect(appReads["non_2xx"] as? Int == 0, "every app read authenticated and answered")
            #expect(figures["app_vs_backend_reads"] is Double)
            #expect(figures["server_cpu_us_per_read"] is Double)
            #expect((figures["static_ceiling"] as? [String: Any])?["requests_per_sec"] is Int)
            let registrations = try #require((figures["mixed"] as? [String: Any])?["registrations"] as? [String: Any])
            let registered = try #require(registrations["registered"] as? Int)
            #expect(registered > 0 && registrations["failed"] as? Int == 0)
            let linked: Int = try await database.pool.query(
                "SELECT count(*) FROM store_purchases WHERE customer_id IS NOT NULL")[0].decode(0)
            #expect(linked == registered)
        }
    }
}
