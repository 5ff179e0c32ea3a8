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
        }
    }

    @Test(arguments: [
        (["accounts", "set-api-rate-limit", "--account", "billing.example.com"], "say the requests per minute"),
        (["accounts", "set-api-rate-limit", "--account", "billing.example.com", "0"], "must be an integer in 1...1000000"),
        (["accounts", "set-api-rate-limit", "500"], "--account is required"),
    ])
    func refusesABadLimit(arguments: [String], message: String) async throws {
        let run = try await ChildProcess.run("storesync", arguments,
                                             environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(run.status == 2)
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }
}
