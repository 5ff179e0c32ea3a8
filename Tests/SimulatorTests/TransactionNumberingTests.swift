import Foundation
import Simulator
import Testing

/// Where a simulator's transaction ids start: a simulator restarted against a database that mirrored an
/// earlier one is configured to number above what that run handed out, so no purchase reuses an id.
@Suite struct TransactionNumberingTests {
    private func simulator(base: Int64?) throws -> AppStoreSimulator {
        var configuration = SimulatorConfiguration(apps: [try Fixture.app()])
        configuration.clockStart = Fixture.start
        configuration.pki = try Fixture.pki.get()
        if let base { configuration.transactionNumberBase = base }
        return try AppStoreSimulator(configuration: configuration)
    }

    @Test(arguments: [(nil, "2000000000000001", "2000000000000002"),
                      (Int64(2_000_000_000_000_041), "2000000000000042", "2000000000000043")])
    func idsCountUpFromTheBase(base: Int64?, first: String, renewal: String) async throws {
        let simulator = try simulator(base: base)
        let bought = try await simulator.subscribe(productId: Fixture.monthly, price: 9_990, currency: "USD", silent: true)
        let renewed = try await simulator.renew(bought.originalTransactionId, silent: true)
        await simulator.stop()
        #expect(bought.originalTransactionId == first && bought.transactionId == first)
        #expect(renewed.transactionId == renewal)
        #expect(simulator.transaction(first)?.webOrderLineItemId != simulator.transaction(renewal)?.webOrderLineItemId)
    }

    @Test(arguments: [Int64(-1), Int64.max])
    func aBaseWithoutRoomIsRefused(base: Int64) async throws {
        #expect(throws: SimulatorError.self) { try simulator(base: base) }
    }
}
