import Accounts
import Foundation
import Postgres
import TestSupport
import Testing

/// The API's rate windows: one per account budget, app token and failing address, so they accumulate; the
/// worker's hourly purge drops the windows that ended long ago, as the worker's role, and no live one.
@Suite struct APIRateWindowsTests {
    @Test func thePurgeDropsOnlyWindowsLongEnded() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            try await database.pool.query("""
                INSERT INTO api_rate_windows (account_id, bucket, window_started_at, hits)
                SELECT $1::bigint, 'app-address:10.0.0.' || n, now() - interval '2 hours', 3 FROM generate_series(1, 7) n
                UNION ALL SELECT $1::bigint, 'rest', now(), 1
                UNION ALL SELECT $1::bigint, 'app-token:00000000-0000-4000-8000-000000000000', now() - interval '59 minutes', 1
                """, [fixture.accountID])
            let role = try await TestRole.create(memberOf: "storesync_worker", for: database)
            let pool = PostgresPool(PostgresConfiguration(url: role.url, poolSize: 1))
            #expect(try await APIRateWindows.purge(pool: pool, batchSize: 3) == 7)
            #expect(try await APIRateWindows.purge(pool: pool) == 0)
            await pool.close()
            await role.drop()
            let left = try await database.pool.query("SELECT bucket FROM api_rate_windows ORDER BY bucket")
            #expect(try left.map { try $0.decode(0, as: String.self) }
                == ["app-token:00000000-0000-4000-8000-000000000000", "rest"])
        }
    }
}
