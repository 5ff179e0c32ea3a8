import AppStore
import CLI
import Crypto
import Foundation
import HTTP
import Ingest
import Postgres
import Simulator

/// The demo's App Store and what it plays: a local simulator that posts its notifications to the running
/// `storesync serve` under the demo account's host, and three purchase stories that the running
/// `storesync work` mirrors.
enum DemoScenarios {
    /// Starts the simulator with a fresh PKI and API key, numbering its transactions above `highestKnown`;
    /// the returned access is what the demo connection must hold to reach and trust this simulator.
    static func startSimulator(listen: Listen, ingestURL: String, host: String, above highestKnown: Int64?) throws
        -> (AppStoreSimulator, DemoCatalog.SimulatorAccess)
    {
        let key = try PrivateKey.generate(.ecP256)
        let issuerID = UUID().uuidString.lowercased()
        var app = SimulatedApp(bundleID: DemoCatalog.bundleID, appAppleID: DemoCatalog.appAppleID, environment: .production,
                               apiKey: SimulatedAPIKey(keyID: DemoCatalog.keyID, issuerID: issuerID, publicKey: key.publicKey))
        // The monthly product runs the simulator's default 30 days; the yearly one must run a year.
        app.productPeriods = [DemoCatalog.yearly.id: .seconds(365 * 86_400)]
        var configuration = SimulatorConfiguration(apps: [app])
        configuration.host = listen.host
        configuration.port = listen.port
        configuration.notificationTarget = NotificationTarget(url: ingestURL, host: host)
        configuration.transactionNumberBase = max(configuration.transactionNumberBase, highestKnown ?? 0)
        let simulator: AppStoreSimulator
        do {
            simulator = try AppStoreSimulator(configuration: configuration)
        } catch {
            throw DemoError(.simulatorUnavailable, "cannot start the App Store simulator on \(listen) "
                + "(--simulator-listen chooses another address): \(error)")
        }
        return (simulator, DemoCatalog.SimulatorAccess(baseURL: simulator.baseURL, rootPEM: simulator.rootCertificate.pem,
                                                      issuerID: issuerID, privateKeyPEM: try key.pem()))
    }

    /// Waits until the `storesync serve` behind `ingestURL` answers `/readyz` (database reachable, schema
    /// current), so no notification is lost to a server still starting.
    static func waitForIngest(_ ingestURL: String, timeout: Duration) async throws {
        guard var components = URLComponents(string: ingestURL) else {
            throw UsageError("--ingest must be an http:// or https:// URL")
        }
        components.path = "/readyz"
        components.query = nil
        components.fragment = nil
        guard let readyURL = components.string else { throw UsageError("--ingest must be an http:// or https:// URL") }
        let client = try HTTPClient()
        let deadline = ContinuousClock.now + timeout
        var last = "no answer yet"
        // At least one try, however short the timeout and however late this process got the CPU.
        repeat {
            do {
                let response = try await client.send(HTTPClientRequest(url: readyURL, timeout: .seconds(5)))
                if response.status == 200 {
                    await client.shutdown()
                    return
                }
                last = "HTTP \(response.status)"
            } catch {
                last = "\(error)"
            }
            try await Task.sleep(for: .milliseconds(250))
        } while ContinuousClock.now < deadline
        await client.shutdown()
        throw DemoError(.ingestUnavailable, "no ready `storesync serve` at \(readyURL) within \(timeout) (last: \(last)); "
            + "start it, or point --ingest at its /webhook/apple")
    }

    /// What was played: the notifications to wait for and the purchases' lineages (originalTransactionId).
    struct Played: Sendable {
        var notificationUUIDs: [String] = []
        var lineages: [String] = []
    }

    /// Customer A subscribes monthly and renews twice; customer B subscribes yearly and gets a full refund;
    /// someone buys monthly without an account token, which leaves the purchase pending claim.
    static func play(on simulator: AppStoreSimulator, customers: [DemoCatalog.Customer]) async throws -> Played {
        guard customers.count >= 2 else {
            throw DemoError(.incompleteAccount, "the demo account has \(customers.count) customers with a token; it needs two")
        }
        var played = Played()
        func delivered(_ result: ScenarioResult) throws -> ScenarioResult {
            guard let notification = result.notification else { return result }
            let delivery = notification.delivery
            guard delivery.outcome == .answered, delivery.httpStatus == 200 else {
                let answer = delivery.httpStatus.map { "HTTP \($0)" } ?? delivery.error ?? delivery.outcome.rawValue
                throw DemoError(.notificationRefused, "the ingest did not take the \(notification.notificationType) notification "
                    + "(\(answer)); is `storesync serve` running at the --ingest URL?")
            }
            played.notificationUUIDs.append(notification.notificationUUID)
            return result
        }
        let (monthly, yearly) = (DemoCatalog.monthly, DemoCatalog.yearly)
        let a = try delivered(await simulator.subscribe(productId: monthly.id, price: monthly.milliunits,
                                                        currency: monthly.currency, appAccountToken: customers[0].token))
        for _ in 0..<2 { _ = try delivered(await simulator.renew(a.originalTransactionId)) }
        let b = try delivered(await simulator.subscribe(productId: yearly.id, price: yearly.milliunits,
                                                        currency: yearly.currency, appAccountToken: customers[1].token))
        _ = try delivered(await simulator.refund(b.originalTransactionId))
        let unclaimed = try delivered(await simulator.subscribe(productId: monthly.id, price: monthly.milliunits,
                                                                currency: monthly.currency))
        played.lineages = [a.originalTransactionId, b.originalTransactionId, unclaimed.originalTransactionId]
        return played
    }

    /// Waits until the worker has handled every played notification (its receipt is committed with the
    /// mirror's writes); fails early on a dead letter and, at the bound, with what the jobs last said.
    static func waitForMirror(_ played: Played, accountID: Int64, pool: PostgresPool, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        let uuids = PostgresArray(played.notificationUUIDs)
        while true {
            let handled: Int = try await pool.query("""
                SELECT count(*) FROM notification_receipts
                WHERE store = 'apple' AND message_id = ANY($1) AND processed_at IS NOT NULL
                """, [uuids])[0].decode(0)
            if handled == played.notificationUUIDs.count { return }
            let dead: [String] = try await pool.query("""
                SELECT reason FROM dead_letters WHERE kind = $2 AND (payload->>'account_id')::bigint = $1
                ORDER BY dead_at LIMIT 3
                """, [accountID, WebhookSource.apple.jobKind]).map { try $0.decode(0) }
            if !dead.isEmpty {
                throw DemoError(.notMirrored, "the worker dead-lettered demo notifications: \(dead.joined(separator: "; ")) "
                    + "(storesync dead-letters list)")
            }
            guard ContinuousClock.now < deadline else {
                let errors: String = try await pool.query("""
                    SELECT coalesce(string_agg(DISTINCT last_error, '; '), 'none') FROM jobs
                    WHERE kind = $2 AND (payload->>'account_id')::bigint = $1
                    """, [accountID, WebhookSource.apple.jobKind])[0].decode(0)
                throw DemoError(.notMirrored, "the worker mirrored \(handled) of \(played.notificationUUIDs.count) demo "
                    + "notifications within \(timeout); is `storesync work` running? (job errors: \(errors))")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
