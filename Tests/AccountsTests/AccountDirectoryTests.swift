import Accounts
import Foundation
import Postgres
import TestSupport
import Testing

/// Adding, finding and listing accounts as the operator's commands do.
@Suite struct AccountDirectoryTests {
    @Test func aHostHasOneAccountAndIsFoundByHostOrId() async throws {
        try await TestDatabase.with { database in
            let (first, again, byHost, byID, missing, all) = try await database.pool.transaction { db in
                let first = try AccountDirectory.addIfAbsent(host: "a.example.com", name: "A", on: db)
                let again = try AccountDirectory.addIfAbsent(host: "a.example.com", name: "other", on: db)
                return (first, again, try AccountDirectory.id(host: "a.example.com", on: db),
                        try AccountDirectory.exists(id: first ?? 0, on: db), try AccountDirectory.id(host: "b.example.com", on: db),
                        try AccountDirectory.list(on: db))
            }
            let id = try #require(first)
            #expect(again == nil)
            #expect(byHost == id && byID && missing == nil)
            #expect(all.map(\.host) == ["a.example.com"] && all.map(\.name) == ["A"])
        }
    }

    @Test func mappingsListWhatEachProductBillsAsAndNothingForAnUnknownConnection() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let id = fixture.connection.id
            let (mappings, unknown) = try await database.pool.transaction { db in
                (try Catalog.mappings(connectionID: id, on: db), try Catalog.mappings(connectionID: id + 1, on: db))
            }
            #expect(mappings?.map(\.product) == [AccountFixture.product])
            #expect(mappings?.first?.planPriceID == fixture.planPriceID && mappings?.first?.basePlan == "")
            #expect(mappings?.first?.amount.minorUnits == 999 && mappings?.first?.plan == "pro")
            #expect(unknown == nil)
        }
    }
}
