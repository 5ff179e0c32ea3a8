import Foundation
import Postgres
import TestSupport
import Testing

/// `storesync sync`, the schedules in `storesync status`, and `storesync-dev bench resync`.
@Suite struct ResyncCLITests {
    @Test(arguments: [
        (["sync"], "--connection is required"),
        (["sync", "--connection", "x"], "--connection must be a positive integer id"),
        (["bench", "resync"], "--purchases N is required"),
        (["bench", "resync", "--purchases", "5", "--store", "amazon"], "--store must be apple, google or both"),
    ])
    func badArgumentsExitTwo(arguments: [String], message: String) async throws {
        let result = try await ChildProcess.run(executable(for: arguments[0]), arguments,
                                                environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }

    @Test func workRefusesABadResyncEnvironmentEvenWhenAFlagOverridesTheOtherSetting() async throws {
        let result = try await ChildProcess.run("storesync", ["work", "--resync-rate-share", "0.5"],
                                                environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x",
                                                              "STORESYNC_RESYNC_HORIZON": "garbage"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("STORESYNC_RESYNC_HORIZON must be a duration"), "stderr was: \(result.stderr)")
    }

    @Test(arguments: [
        (["work"], ["STORESYNC_STORE_RATE_SHARE": "half"], "STORESYNC_STORE_RATE_SHARE must be"),
        (["work", "--store-rate-share", "-1"], [:], "--store-rate-share must be"),
        (["serve", "--listen", "127.0.0.1:0"], ["STORESYNC_API_TRUSTED_PROXIES": "10.0.0.0/8, lb.internal"],
         "STORESYNC_API_TRUSTED_PROXIES must be IP addresses or CIDR ranges"),
    ])
    func aBadRateShareOrProxySettingIsNamedAsGiven(arguments: [String], environment: [String: String], message: String) async throws {
        let result = try await ChildProcess.run("storesync", arguments,
                                                environment: environment.merging(["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"]) { a, _ in a })
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }

    @Test func syncEnqueuesLiveLineagesAndStatusShowsTheDailyRun() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            try await database.pool.query("""
                WITH a AS (INSERT INTO accounts (host) VALUES ('billing.test') RETURNING id),
                c AS (INSERT INTO store_connections (account_id, store, app_identifier, environment, app_apple_id)
                      SELECT id, 'apple', 'com.example.app', 'Production', 1 FROM a RETURNING id)
                INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state, expires_at,
                                             snapshot, as_of)
                SELECT c.id, l, 'Production', 'p', s, e, '{}', now() FROM c,
                       (VALUES ('1', 'active', now() + interval '1 day'), ('2', 'expired', now() - interval '90 days'),
                               ('3', 'expired', now() - interval '1 day')) AS v(l, s, e)
                """)
            let all = try await ChildProcess.run("storesync", ["sync", "--connection", "1", "--json"], environment: env)
            #expect(all.status == 0, "\(all.stderr)")
            #expect(try jsonObject(all.stdout)["enqueued"] as? Int == 2)
            let one = try await ChildProcess.run("storesync", ["sync", "--connection", "1", "--purchase", "2"], environment: env)
            #expect(one.stdout.contains("1 resync job(s) enqueued"))
            let missing = try await ChildProcess.run("storesync", ["sync", "--connection", "1", "--purchase", "9"], environment: env)
            #expect(missing.status == 1 && missing.stderr.contains("connection 1 has no purchase 9"))

            try await database.pool.query(
                "INSERT INTO schedule_runs (schedule, period, claimed_by) VALUES ('daily-sync', '2026-11-29', 'w1')")
            try await database.pool.query("INSERT INTO jobs (kind, unique_key) VALUES ('apple.resync', 'resync:daily:1:abc')")
            let status = try await ChildProcess.run("storesync", ["status", "--json"], environment: env)
            let schedules = try #require(try jsonObject(status.stdout)["schedules"] as? [[String: Any]])
            #expect(schedules.first?["schedule"] as? String == "daily-sync")
            #expect(schedules.first?["resyncs_pending"] as? Int == 1)
            #expect(schedules.first?["drift"] as? Int == 0)
        }
    }

    @Test func benchResyncReportsBothStores() async throws {
        try await TestDatabase.with { database in
            let result = try await ChildProcess.run("storesync-dev", ["bench", "resync", "--purchases", "20"],
                                                    environment: ["DATABASE_URL": database.url, "STORESYNC_LOG_LEVEL": "error"],
                                                    timeout: .seconds(120))
            #expect(result.status == 0, "\(result.stderr)")
            let figures = try jsonObject(result.stdout)
            for store in ["apple", "google"] {
                #expect((figures["\(store)_purchases_per_sec"] as? Double ?? 0) > 0)
                #expect(figures["\(store)_default_budget_per_sec"] as? Double == 25)
                // At most the budget's pace: 1,000,000 ÷ 25/s is 11.11 h, longer only if this machine is slower.
                #expect((figures["\(store)_projected_hours_for_1m"] as? Double ?? 0) >= 11.11)
            }
        }
    }
}
