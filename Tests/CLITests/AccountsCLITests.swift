import Foundation
import TestSupport
import Testing

/// `storesync accounts`: the Mobile Stores API budget is set per account and shown by `list`.
@Suite struct AccountsCLITests {
    @Test func setsAnAccountsAPIRateLimit() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            #expect(try await ChildProcess.run("storesync", ["accounts", "add", "--host", "billing.example.com"],
                                               environment: env).status == 0)
            let set = try await ChildProcess.run("storesync", ["accounts", "set-api-rate-limit", "--account",
                                                               "billing.example.com", "1200"], environment: env)
            #expect(set.status == 0, "\(set.stderr)")
            let list = try await ChildProcess.run("storesync", ["accounts", "list", "--json"], environment: env)
            let accounts = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            #expect(accounts.first?["api_rate_limit"] as? Int == 1200)
            #expect(accounts.first?["app_token_rate_limit"] as? Int == 120)
            #expect(accounts.first?["app_address_failure_limit"] as? Int == 60)
        }
    }

    /// The app endpoints' limits, each alone or both; a limit left out keeps its value.
    @Test func setsTheAppLimitsApartFromTheRESTBudget() async throws {
        try await TestDatabase.with { database in
            let env = ["DATABASE_URL": database.url]
            #expect(try await ChildProcess.run("storesync", ["accounts", "add", "--host", "billing.example.com"],
                                               environment: env).status == 0)
            let first = try await ChildProcess.run("storesync", ["accounts", "set-app-rate-limits", "--account",
                                                                 "billing.example.com", "--per-token", "300"], environment: env)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("300 app requests per minute per token"))
            let second = try await ChildProcess.run("storesync", ["accounts", "set-app-rate-limits", "--account",
                                                                  "billing.example.com", "--failures-per-address", "10"],
                                                    environment: env)
            #expect(second.status == 0, "\(second.stderr)")
            let list = try await ChildProcess.run("storesync", ["accounts", "list", "--json"], environment: env)
            let accounts = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            #expect(accounts.first?["app_token_rate_limit"] as? Int == 300)
            #expect(accounts.first?["app_address_failure_limit"] as? Int == 10)
            #expect(accounts.first?["api_rate_limit"] as? Int == 500)
        }
    }

    @Test(arguments: [
        (["accounts", "set-api-rate-limit", "--account", "billing.example.com"], "say the requests per minute"),
        (["accounts", "set-api-rate-limit", "--account", "billing.example.com", "0"], "must be an integer in 1...1000000"),
        (["accounts", "set-api-rate-limit", "500"], "--account is required"),
        (["accounts", "set-app-rate-limits", "--account", "billing.example.com"], "say --per-token N, --failures-per-address M"),
        (["accounts", "set-app-rate-limits", "--account", "billing.example.com", "--per-token", "0"], "--per-token must be"),
        (["accounts", "set-app-rate-limits", "--per-token", "5"], "--account is required"),
    ])
    func refusesABadLimit(arguments: [String], message: String) async throws {
        let run = try await ChildProcess.run("storesync", arguments,
                                             environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(run.status == 2)
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }
}
