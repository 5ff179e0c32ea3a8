import AppStore
import CLI
import Crypto
import Foundation
import Logging
import Simulator

struct SimulatorCommand: Command {
    static let name = "simulator"
    static let summary = "run a local App Store and/or Google Play (signed API answers, notifications) or drive a running one"
    static let usage = """
        usage: storesync-dev simulator [--listen HOST:PORT] [--bundle-id B] [--environment Production|Sandbox]
                                   [--app-apple-id N] [--notify URL [--notify-host H]] [--root-out FILE]
                                   [--key-id K] [--issuer-id I] (--key-out FILE | --api-public-key FILE)
                                   [--google-package P … (--google-service-account-key-out FILE |
                                    --google-service-account-key FILE) [Google options]]
               storesync-dev simulator scenario ACTION --url URL [options]
               storesync-dev simulator google ACTION --url GOOGLE_URL [options]

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

        Google Play runs when --google-package is given (alone, or next to the App Store in the same process,
        on its own port): the OAuth token endpoint (POST /token, checking service-account assertions), the push
        key set (GET /oauth2/v3/certs), the Play Developer API (subscriptionsv2.get, subscriptions.acknowledge,
        orders.get and batchGet, voidedpurchases.list under /androidpublisher/v3/), and a Pub/Sub push sender
        that signs OIDC tokens and redelivers until StoreSync answers 102, 200, 201, 202 or 204. Its settings
        are printed under "google".

          --google-package P                 a package of the simulated Play Store (repeatable)
          --google-listen HOST:PORT          default 127.0.0.1:0 (--listen when the App Store does not run)
          --google-service-account-key-out FILE
                                             generate the service-account key and write its JSON key file here
                                             (mode 600), token_uri pointing at the simulator
          --google-service-account-key FILE  instead, accept assertions of an existing JSON key file
          --google-service-account-email E   the generated account's email, default
                                             \(SimulatorGoogleOptions.defaultServiceAccountEmail)
          --google-push-url URL              where pushes are POSTed, e.g. http://127.0.0.1:8080/webhook/google-play;
                                             without it they are only recorded
          --google-push-host H               Host header for the pushes (the StoreSync account's host)
          --google-push-audience A           the push tokens' aud, default the push URL
          --google-push-email E              the push service account (the tokens' email), default
                                             \(SimulatorGoogleOptions.defaultPushEmail)
          --google-push-attempts N           deliveries per message before giving up, default 5
          --google-push-backoff D            first redelivery delay, doubling up to 600s, default 10s

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

        google ACTION does the same for the Play simulator at --url (its "google" url). Prices are minor units
        (999 = 9.99 USD), tax included. Actions and their options:

          purchase                --product-id P --base-plan B --price MINOR --currency C [--tax MINOR]
                                  [--package P] [--offer-id O] [--account-id A] [--profile-id X]
                                  [--test-purchase] [--region CC]
          renew | grace | account-hold | recover | resume | restart | expire | expire-long-ago   --token T
          pause                   --token T --for D     (e.g. 168h for a week)
          cancel                  --token T [--by user|system|developer]
          upgrade | downgrade     --token T --product-id P --base-plan B --price MINOR [--tax MINOR] [--offer-id O]
          refund                  --token T [--order-id O] [--keep-access] [--partial MINOR]
                                  [--voided-source 0|1|2] [--voided-reason 0…8]
          test-notification       [--package P]
          resend                  [--times N]           deliver the last message again, same messageId
          advance-clock           --by D
          faults                  [--rate-limit N] [--retry-after D] [--fail N] [--deny N] [--latency D]
                                  [--drop-pushes N] [--duplicate-push N]
                                  [--bad-push-token wrongAudience|wrongEmail|wrongIssuer|emailNotVerified|
                                   expired|unknownKey|tamperedSignature|missing [--bad-push-tokens N]]
          state                   --token T             the token as subscriptionsv2.get reports it, with orders
          requests | pushes | acknowledgements
          rotate-key              [--drop-previous]     sign pushes with a new key
          expire-access-tokens                          every access token issued so far stops working

        Every state-changing action takes --silent: change the state without pushing a notification.
        """

    static func run(_ arguments: inout Arguments, environment: Environment) async throws -> Int32 {
        if arguments.subcommand("scenario") { return try await SimulatorScenario.run(&arguments) }
        if arguments.subcommand("google") { return try await SimulatorGoogleScenario.run(&arguments) }
        return try await serve(&arguments)
    }

    private static func serve(_ arguments: inout Arguments) async throws -> Int32 {
        let listenText = try arguments.option("--listen")
        let bundleIDOption = try arguments.option("--bundle-id")
        let environmentOption = try arguments.option("--environment")
        let appAppleIDOption = try arguments.option("--app-apple-id")
        let notifyURL = try arguments.option("--notify")
        let notifyHost = try arguments.option("--notify-host")
        let rootOut = try arguments.option("--root-out")
        let keyIDOption = try arguments.option("--key-id")
        let issuerIDOption = try arguments.option("--issuer-id")
        let keyOut = try arguments.option("--key-out")
        let publicKeyFile = try arguments.option("--api-public-key")
        let appleRuns = keyOut != nil || publicKeyFile != nil
        let google = try SimulatorGoogleOptions.parse(&arguments, defaultListen: appleRuns ? "127.0.0.1:0" : listenText ?? "127.0.0.1:0")
        try arguments.finish()
        guard appleRuns || google != nil else {
            throw UsageError("give --key-out FILE (generate the API key) or --api-public-key FILE (use an existing one) "
                             + "for the App Store, and/or --google-package P for Google Play")
        }
        var apple: (AppStoreSimulator, Output.Value)?
        if appleRuns {
            apple = try startAppStore(listen: try Listen(listenText ?? "127.0.0.1:0", "--listen"),
                                      bundleID: bundleIDOption ?? "com.example.app", environmentName: environmentOption ?? "Sandbox",
                                      appAppleIDText: appAppleIDOption, notifyURL: notifyURL, notifyHost: notifyHost,
                                      rootOut: rootOut, keyID: keyIDOption ?? "SIMULATOR1",
                                      issuerID: issuerIDOption ?? UUID().uuidString.lowercased(), keyOut: keyOut,
                                      publicKeyFile: publicKeyFile)
        } else {
            let appleOnly: [(String, String?)] = [("--bundle-id", bundleIDOption), ("--environment", environmentOption),
                                                  ("--app-apple-id", appAppleIDOption), ("--notify", notifyURL),
                                                  ("--notify-host", notifyHost), ("--root-out", rootOut), ("--key-id", keyIDOption),
                                                  ("--issuer-id", issuerIDOption)]
            if let (name, _) = appleOnly.first(where: { $0.1 != nil }) {
                throw UsageError("\(name) is an App Store option: give --key-out FILE or --api-public-key FILE too")
            }
        }
        let play: PlaySimulator?
        do {
            play = try await google?.start()
        } catch {
            await apple?.0.stop()
            throw error
        }
        var settings: [(String, Output.Value)] = []
        if let apple, case .object(let fields) = apple.1 { settings = fields }
        if let play, let google { settings.append(("google", google.settings(play))) }
        let logger = Logger(component: "simulator")
        // Printed once SIGTERM and SIGINT are caught: a caller stopping it on seeing the settings stops it cleanly.
        await waitForTermination {
            Output.print(Output.Value.object(settings).text)
            if let apple { logger.info("listening", ["url": .string(apple.0.baseURL)]) }
            if let play { logger.info("Google Play listening", ["url": .string(play.baseURL)]) }
        }
        await apple?.0.stop()
        await play?.stop()
        logger.info("stopped")
        return 0
    }

    /// Starts the App Store simulator; returns it with the settings to print.
    private static func startAppStore(listen: Listen, bundleID: String, environmentName: String, appAppleIDText: String?,
                                      notifyURL: String?, notifyHost: String?, rootOut: String?, keyID: String, issuerID: String,
                                      keyOut: String?, publicKeyFile: String?) throws -> (AppStoreSimulator, Output.Value) {
        let storeEnvironment = AppStoreEnvironment(rawValue: environmentName)
        guard storeEnvironment == .production || storeEnvironment == .sandbox else {
            throw UsageError("--environment must be Production or Sandbox, got \(environmentName.debugDescription)")
        }
        let appAppleID = try appAppleIDText.map { text -> Int64 in
            guard let id = Int64(text), id > 0 else { throw UsageError("--app-apple-id must be a positive integer") }
            return id
        }
        if storeEnvironment == .production && appAppleID == nil {
            throw UsageError("--app-apple-id is required for Production: Apple's production payloads carry it")
        }
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
        return (simulator, .object([
            ("url", .string(simulator.baseURL)), ("bundleId", .string(bundleID)),
            ("environment", .string(storeEnvironment.rawValue)), ("appAppleId", appAppleID.map { .int(Int($0)) } ?? .null),
            ("keyId", .string(keyID)), ("issuerId", .string(issuerID)),
            ("keyFile", keyOut.map { .string($0) } ?? .null), ("rootFile", rootOut.map { .string($0) } ?? .null),
            ("notify", notifyURL.map { .string($0) } ?? .null),
        ]))
    }

    private static func readPublicKey(_ path: String) throws -> PublicKey {
        let pem = String(decoding: try Parse.file(path, "--api-public-key", limit: 64 * 1024), as: UTF8.self)
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
