import Accounts
import CLI
import Foundation
import Logging
import Postgres
import Simulator

struct DemoCommand: Command {
    static let name = "demo"
    static let summary = "on a database without accounts: a demo account on a local App Store, with purchases mirrored"
    static let usage = """
        usage: storesync-dev demo [--ingest URL] [--simulator-listen HOST:PORT] [--host H] [--keep-running] [--timeout D]

        For a first look, next to a running `storesync serve` and `storesync work` (deploy/dev.sh run starts it
        with them; STORESYNC_DEMO=off there skips it). On a database WITHOUT accounts it starts a local App
        Store simulator in this process and creates the demo account H, an App Store connection to that
        simulator (Production, a generated API key, its root trusted), a plan with a monthly and a yearly price
        mapped to the products demo.pro.monthly and demo.pro.yearly, and two customers with account tokens.
        Then it plays: customer A subscribes monthly and renews twice; customer B subscribes yearly and is
        refunded; someone buys without an account token (pending claim). The simulator posts the notifications
        to --ingest under host H; once the worker has mirrored them it prints the subscriptions, invoices and
        refunds, and where to look at them.

        A database with other accounts is never touched: the demo says so and exits 0. When the demo account
        exists already it only prints the summary; with --keep-running it also starts the simulator again and
        points the demo connection at it (URL, root and API key are new on every start; the simulator keeps
        subscriptions in memory only, so it knows none from an earlier run).

          --ingest URL              the Apple webhook of the running `storesync serve`
                                    default http://127.0.0.1:8080/webhook/apple
          --simulator-listen H:P    where the simulator listens; a fixed port, since the demo connection
                                    stores its URL                                    default 127.0.0.1:8095
          --host H                  the demo account's webhook host                   default demo.localhost
          --keep-running            keep the simulator up until SIGINT or SIGTERM, for
                                    `storesync-dev simulator scenario ACTION --url URL`
          --timeout D               bound for the ingest to be ready and for the worker to mirror, default 60s
        """

    struct Options {
        var ingestURL = "http://127.0.0.1:8080/webhook/apple"

        /// The origin `serve` answers on, where its Mobile Stores API is too.
        var apiURL: String? {
            guard let url = URL(string: ingestURL), let scheme = url.scheme, let host = url.host else { return nil }
            return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
        }
        var listen: Listen
        var host = "demo.localhost"
        var keepRunning = false
        var timeout: Duration = .seconds(60)

        init(_ arguments: inout Arguments) throws {
            if let url = try arguments.option("--ingest") {
                guard url.utf8.count <= 2000, Parse.matches(url, "https?://[^\\s/?#]+[^\\s]*"),
                      URL(string: url)?.host != nil else {
                    throw UsageError("--ingest must be an http:// or https:// URL, got \(Parse.quoted(url))")
                }
                ingestURL = url
            }
            listen = try Listen(try arguments.option("--simulator-listen") ?? "127.0.0.1:8095", "--simulator-listen")
            if let text = try arguments.option("--host") {
                host = try Parse.host(text, "--host")
            }
            keepRunning = arguments.flag("--keep-running")
            if let text = try arguments.option("--timeout") {
                timeout = try Parse.duration(text, "--timeout", range: .seconds(1)...(.seconds(3600)))
            }
            try arguments.finish()
        }
    }

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        let options = try Options(&arguments)
        let found = try await environment.withPool { pool in
            try await pool.withConnection { db in try await DemoCatalog.state(host: options.host, on: db) }
        }
        switch found {
        case .configured(let accounts):
            Output.print("storesync-dev demo: the database has \(accounts) account\(accounts == 1 ? "" : "s") and none is the "
                + "demo's (\(options.host)); the demo only seeds a database without accounts, so it does nothing.")
            return 0
        case .demo(let accountID) where !options.keepRunning:
            let summary = try await environment.withPool { pool in
                try await pool.withConnection { db in
                    DemoSummary.render(try await DemoSummary.read(accountID: accountID, on: db),
                                       context(options, accountID: accountID, simulatorURL: nil,
                                               customers: try await DemoCatalog.customers(accountID: accountID, on: db)))
                }
            }
            Output.print("storesync-dev demo: the demo account \(options.host) exists already; nothing to seed.")
            Output.print(summary)
            return 0
        case .empty:
            // Before anything is written: a demo without its ingest would leave an account with no purchases.
            try await DemoScenarios.waitForIngest(options.ingestURL, timeout: options.timeout)
        case .demo:
            break
        }

        let (simulator, summary) = try await environment.withPool { pool in
            let highest = try await pool.withConnection { db in try await DemoCatalog.highestTransactionNumber(on: db) }
            let (simulator, access) = try DemoScenarios.startSimulator(listen: options.listen, ingestURL: options.ingestURL,
                                                                      host: options.host, above: highest)
            Logger(component: "demo").info("simulator listening", ["url": .string(simulator.baseURL)])
            do {
                return (simulator, try await prepare(found, options: options, simulator: simulator, access: access, pool: pool))
            } catch {
                await simulator.stop()
                throw error
            }
        }
        if let summary, options.keepRunning {
            // Printed once the signal handlers are in place, so whoever reads it may stop the demo at once.
            await waitForTermination { Output.print(summary) }
        } else if let summary {
            Output.print(summary)
        }
        await simulator.stop()
        return 0
    }

    /// Seeds and plays (empty database) or repoints the demo connection (demo account); returns the summary
    /// to print, or `nil` when accounts appeared in between and the demo stayed out.
    private static func prepare(_ found: DemoCatalog.State, options: Options, simulator: AppStoreSimulator,
                                access: DemoCatalog.SimulatorAccess, pool: PostgresPool) async throws -> String? {
        let accountID: Int64
        let connectionID: Int64
        let customers: [DemoCatalog.Customer]
        var apiClient: APIClients.Created?
        var lineages: [String] = []
        if case .demo(let id) = found {
            let refreshed = try await pool.transaction { db in
                (try DemoCatalog.refresh(accountID: id, access: access, on: db), try DemoCatalog.customers(accountID: id, on: db))
            }
            (accountID, connectionID, customers) = (id, refreshed.0, refreshed.1)
            Output.print("storesync-dev demo: the demo account \(options.host) exists already; its connection now points at "
                + "the simulator at \(simulator.baseURL).")
        } else {
            let seeded = try await pool.transaction { db in
                try DemoCatalog.seed(host: options.host, access: access, on: db)
            }
            guard let seeded else {
                Output.print("storesync-dev demo: accounts were added meanwhile; the demo does nothing.")
                return nil
            }
            (accountID, connectionID, customers) = (seeded.accountID, seeded.connectionID, seeded.customers)
            apiClient = seeded.apiClient
            Output.print("storesync-dev demo: created the demo account \(options.host) on the App Store simulator at "
                + "\(simulator.baseURL); playing purchases and waiting for the worker to mirror them…")
            let played = try await DemoScenarios.play(on: simulator, customers: customers)
            try await DemoScenarios.waitForMirror(played, accountID: accountID, pool: pool, timeout: options.timeout)
            lineages = played.lineages
        }
        let purchases = try await pool.withConnection { db in try await DemoSummary.read(accountID: accountID, on: db) }
        return DemoSummary.render(purchases, context(options, accountID: accountID, connectionID: connectionID,
                                                     simulatorURL: options.keepRunning ? simulator.baseURL : nil,
                                                     customers: customers, lineages: lineages, apiClient: apiClient))
    }

    private static func context(_ options: Options, accountID: Int64, connectionID: Int64? = nil, simulatorURL: String?,
                                customers: [DemoCatalog.Customer], lineages: [String] = [],
                                apiClient: APIClients.Created? = nil) -> DemoSummary.Context {
        DemoSummary.Context(host: options.host, accountID: accountID, connectionID: connectionID,
                            runningSimulatorURL: simulatorURL, customers: customers, knownLineages: lineages,
                            apiClient: apiClient, apiURL: options.apiURL, binary: CommandLine.arguments.first ?? "storesync")
    }
}
