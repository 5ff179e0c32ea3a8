import AppStore
import Crypto
import Foundation
import Logging
import Simulator

struct SimulatorCommand: Command {
    static let name = "simulator"
    static let summary = "run a local App Store (signed API answers, notifications) or drive a running one"
    static let usage = """
        usage: storesync simulator [--listen HOST:PORT] [--bundle-id B] [--environment Production|Sandbox]
                                   [--app-apple-id N] [--notify URL [--notify-host H]] [--root-out FILE]
                                   [--key-id K] [--issuer-id I] (--key-out FILE | --api-public-key FILE)
               storesync simulator scenario ACTION --url URL [options]

        Serves the App Store Server API (GET /inApps/v1/subscriptions/{id}, GET /inApps/v2/history/{id},
        PUT /inApps/v2/transactions/consumption/{id}, POST /inApps/v1/notifications/history) for one app,
        every payload signed by a PKI generated at start, and a control API under /simulator/ that runs
        scenarios and posts the App Store Server Notifications they cause. Its clock starts now and moves
        only when a scenario moves it. Prints one JSON line with the URL and the settings to give StoreSync,
        then runs until SIGINT or SIGTERM. For local testing only: the control API has no authentication.

          --listen HOST:PORT      default 127.0.0.1:0 (port 0 picks a free port; the URL printed has it)
          --bundle-id B           default com.example.app
          --environment E         Production or Sandbox, default Sandbox
          --app-apple-id N        required for Production
          --notify URL            where notifications are POSTed, e.g. http://127.0.0.1:8080/webhook/apple;
                                  without it they are only recorded (notification history)
          --notify-host H         Host header for the notifications (the StoreSync account's host)
          --root-out FILE         write the root certificate (PEM) a store connection must trust
          --key-id K              the API key's id, default SIMULATOR1
          --issuer-id I           the API key's issuer, default a new UUID (printed)
          --key-out FILE          generate the App Store Connect API key and write its private .p8 PEM
                                  here (mode 600), for StoreSync to sign its requests with
          --api-public-key FILE   instead, accept tokens of an existing key: its PEM public key (or the .p8)

        scenario ACTION runs one command on the simulator at --url and prints its JSON result (exit 1 if the
        simulator refused it). Actions and their options:

          subscribe               --product-id P --price M --currency C [--bundle-id B] [--account-token UUID]
                                  [--free-trial] [--family-shared]      (prices in milliunits: 9990 = 9.99)
          resubscribe             --id OTID [--product-id P] [--price M]
          renew | recover | cancel | resume | expire-grace-period | revoke-family-sharing     --id OTID
          fail-to-renew           --id OTID [--grace]
          expire                  --id OTID --reason VOLUNTARY|BILLING_RETRY|PRICE_INCREASE|PRODUCT_NOT_FOR_SALE|OTHER
          upgrade | downgrade     --id OTID --product-id P --price M
          refund                  --id OTID [--transaction-id T] [--percentage MILLI] [--revocation-reason 0|1]
          decline-refund | reverse-refund                  --id OTID [--transaction-id T]
          consumption-request     --id OTID [--transaction-id T] --reason UNINTENDED_PURCHASE|FULFILLMENT_ISSUE|
                                  UNSATISFIED_WITH_PURCHASE|LEGAL|OTHER
          resend                  [--times N]           post the last notification again, unchanged
          advance-clock           --by D                (e.g. 30m, 2h)
          faults                  [--rate-limit N] [--retry-after D] [--retry-after-format unix-ms|seconds]
                                  [--fail N] [--latency D] [--drop-notifications N]
          state                   --id OTID             the subscription as the simulator holds it
          requests | consumption  server-API requests per endpoint | consumption information received

        Every state-changing action takes --silent: change the state without sending a notification.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        if arguments.subcommand("scenario") { return try await SimulatorScenario.run(&arguments) }
        return try await serve(&arguments)
    }

    private static func serve(_ arguments: inout Arguments) async throws -> Int32 {
        let listen = try Listen(try arguments.option("--listen") ?? "127.0.0.1:0", "--listen")
        let bundleID = try arguments.option("--bundle-id") ?? "com.example.app"
        let environmentName = try arguments.option("--environment") ?? "Sandbox"
        let storeEnvironment = AppStoreEnvironment(rawValue: environmentName)
        guard storeEnvironment == .production || storeEnvironment == .sandbox else {
            throw UsageError("--environment must be Production or Sandbox, got \(environmentName.debugDescription)")
        }
        let appAppleID = try arguments.option("--app-apple-id").map { text -> Int64 in
            guard let id = Int64(text), id > 0 else { throw UsageError("--app-apple-id must be a positive integer") }
            return id
        }
        if storeEnvironment == .production && appAppleID == nil {
            throw UsageError("--app-apple-id is required for Production: Apple's production payloads carry it")
        }
        let notifyURL = try arguments.option("--notify")
        let notifyHost = try arguments.option("--notify-host")
        let rootOut = try arguments.option("--root-out")
        let keyID = try arguments.option("--key-id") ?? "SIMULATOR1"
        let issuerID = try arguments.option("--issuer-id") ?? UUID().uuidString.lowercased()
        let keyOut = try arguments.option("--key-out")
        let publicKeyFile = try arguments.option("--api-public-key")
        try arguments.finish()
        if let notifyURL, !(notifyURL.hasPrefix("http://") || notifyURL.hasPrefix("https://")) {
            throw UsageError("--notify must be an http:// or https:// URL")
        }
        guard notifyHost == nil || notifyURL != nil else { throw UsageError("--notify-host needs --notify") }
        let publicKey: PublicKey
        switch (keyOut, publicKeyFile) {
        case (let path?, nil): publicKey = try generateKey(into: path)
        case (nil, let path?): publicKey = try readPublicKey(path)
        default: throw UsageError("give --key-out FILE (generate the API key) or --api-public-key FILE (use an existing one)")
        }
        let app = SimulatedApp(bundleID: bundleID, appAppleID: appAppleID, environment: storeEnvironment,
                               apiKey: SimulatedAPIKey(keyID: keyID, issuerID: issuerID, publicKey: publicKey))
        var configuration = SimulatorConfiguration(apps: [app])
        configuration.host = listen.host
        configuration.port = listen.port
        configuration.notificationTarget = notifyURL.map { NotificationTarget(url: $0, host: notifyHost) }
        let simulator: AppStoreSimulator
        do {
            simulator = try AppStoreSimulator(configuration: configuration)
        } catch let error as SimulatorError {
            throw UsageError(error.message)
        }
        if let rootOut { try simulator.writeRootCertificate(to: rootOut) }
        Output.print(Output.Value.object([
            ("url", .string(simulator.baseURL)), ("bundleId", .string(bundleID)),
            ("environment", .string(storeEnvironment.rawValue)), ("appAppleId", appAppleID.map { .int(Int($0)) } ?? .null),
            ("keyId", .string(keyID)), ("issuerId", .string(issuerID)),
            ("keyFile", keyOut.map { .string($0) } ?? .null), ("rootFile", rootOut.map { .string($0) } ?? .null),
            ("notify", notifyURL.map { .string($0) } ?? .null),
        ]).text)
        let logger = Logger(component: "simulator")
        await waitForTermination {
            logger.info("listening", ["url": .string(simulator.baseURL)])
        }
        await simulator.stop()
        logger.info("stopped")
        return 0
    }

    private static func readPublicKey(_ path: String) throws -> PublicKey {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 64 * 1024 else {
            throw UsageError("cannot read --api-public-key \(path)")
        }
        let pem = String(decoding: data, as: UTF8.self)
        if let key = try? PublicKey(pem: pem) { return key }
        guard let key = try? PrivateKey(pem: pem) else {
            throw UsageError("--api-public-key \(path) holds no PEM public key or private key")
        }
        return key.publicKey
    }

    /// A fresh P-256 key, its private half written as the `.p8` PEM StoreSync reads (readable by the owner only).
    private static func generateKey(into path: String) throws -> PublicKey {
        let key = try PrivateKey.generate(.ecP256)
        guard FileManager.default.createFile(atPath: path, contents: Data(try key.pem().utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw UsageError("cannot write --key-out \(path)")
        }
        return key.publicKey
    }
}
