import CLI
import Crypto
import Foundation
import Simulator

/// The `--google-…` options of `storesync-dev simulator`: whether to run a Play simulator next to (or instead of)
/// the App Store one, and how. Parsed before anything starts, so a bad combination exits 2 with the reason.
struct SimulatorGoogleOptions {
    static let defaultServiceAccountEmail = "storesync@storesync-simulator.iam.gserviceaccount.com"
    static let defaultPushEmail = "pubsub-push@storesync-simulator.iam.gserviceaccount.com"

    let packages: [String]
    let listen: Listen
    /// The account whose assertions the token endpoint accepts: generated, or read from a key file.
    let serviceAccount: SimulatedServiceAccount
    /// The generated key, written to `keyFile` once the simulator runs (the file's `token_uri` needs its port).
    let generatedKey: PrivateKey?
    let keyFile: String
    let pushURL: String?
    let pushHost: String?
    let pushAudience: String?
    let pushEmail: String
    let retry: PushRetryPolicy

    /// `nil` when no `--google-package` is given (and then no other Google option may be).
    static func parse(_ arguments: inout Arguments, defaultListen: String) throws -> SimulatorGoogleOptions? {
        let packages = try arguments.options("--google-package")
        let listen = try arguments.option("--google-listen")
        let email = try arguments.option("--google-service-account-email")
        let keyOut = try arguments.option("--google-service-account-key-out")
        let keyFile = try arguments.option("--google-service-account-key")
        let pushURL = try arguments.option("--google-push-url")
        let pushHost = try arguments.option("--google-push-host")
        let pushAudience = try arguments.option("--google-push-audience")
        let pushEmail = try arguments.option("--google-push-email")
        let attempts = try arguments.option("--google-push-attempts")
        let backoff = try arguments.option("--google-push-backoff")
        guard !packages.isEmpty else {
            let given: [(String, String?)] = [("--google-listen", listen), ("--google-service-account-email", email),
                                              ("--google-service-account-key-out", keyOut), ("--google-service-account-key", keyFile),
                                              ("--google-push-url", pushURL), ("--google-push-host", pushHost),
                                              ("--google-push-audience", pushAudience), ("--google-push-email", pushEmail),
                                              ("--google-push-attempts", attempts), ("--google-push-backoff", backoff)]
            if let (name, _) = given.first(where: { $0.1 != nil }) { throw UsageError("\(name) needs --google-package") }
            return nil
        }
        guard (keyOut == nil) != (keyFile == nil) else {
            throw UsageError("give --google-service-account-key-out FILE (generate the service-account key) or "
                             + "--google-service-account-key FILE (use an existing JSON key file)")
        }
        if let pushURL, !(pushURL.hasPrefix("http://") || pushURL.hasPrefix("https://")) {
            throw UsageError("--google-push-url must be an http:// or https:// URL")
        }
        for (name, value) in [("--google-push-host", pushHost), ("--google-push-audience", pushAudience),
                              ("--google-push-email", pushEmail)] where value != nil && pushURL == nil {
            throw UsageError("\(name) needs --google-push-url")
        }
        var retry = PushRetryPolicy()
        if let attempts { retry.maxAttempts = try Parse.int(attempts, "--google-push-attempts", range: 1...100) }
        if let backoff {
            retry.minimumBackoff = try Parse.duration(backoff, "--google-push-backoff", range: .zero...(.seconds(600)))
            retry.maximumBackoff = max(retry.maximumBackoff, retry.minimumBackoff)
        }
        let serviceAccount: SimulatedServiceAccount
        var generatedKey: PrivateKey?
        if let keyFile {
            guard email == nil else { throw UsageError("--google-service-account-email comes from the key file; leave it out") }
            serviceAccount = try readKeyFile(keyFile)
        } else {
            let key = try PrivateKey.generate(.rsa(bits: 2048))
            serviceAccount = SimulatedServiceAccount(clientEmail: email ?? defaultServiceAccountEmail, publicKey: key.publicKey)
            generatedKey = key
        }
        return SimulatorGoogleOptions(
            packages: packages, listen: try Listen(listen ?? defaultListen, "--google-listen"), serviceAccount: serviceAccount,
            generatedKey: generatedKey, keyFile: keyOut ?? keyFile ?? "", pushURL: pushURL, pushHost: pushHost,
            pushAudience: pushAudience, pushEmail: pushEmail ?? defaultPushEmail, retry: retry)
    }

    /// Starts the Play simulator and, for `--google-service-account-key-out`, writes the key file pointing at it.
    func start() async throws -> PlaySimulator {
        var configuration = PlaySimulatorConfiguration(apps: packages.map(SimulatedPlayApp.init(packageName:)),
                                                       serviceAccount: serviceAccount)
        configuration.host = listen.host
        configuration.port = listen.port
        configuration.pushRetry = retry
        if let pushURL {
            configuration.push = PlayPushTarget(url: pushURL, audience: pushAudience, serviceAccountEmail: pushEmail, host: pushHost)
        }
        let simulator: PlaySimulator
        do {
            simulator = try PlaySimulator(configuration: configuration)
        } catch let error as SimulatorError {
            throw UsageError(error.message)
        }
        if let generatedKey {
            do {
                try simulator.writeServiceAccountKeyFile(to: keyFile, privateKey: generatedKey)
            } catch {
                await simulator.stop()
                throw UsageError("cannot write --google-service-account-key-out \(keyFile)")
            }
        }
        return simulator
    }

    /// What the printed settings line says about the Play simulator.
    func settings(_ simulator: PlaySimulator) -> Output.Value {
        .object([
            ("url", .string(simulator.baseURL)), ("tokenUri", .string(simulator.tokenURI)),
            ("certificatesUrl", .string(simulator.certificatesURL)), ("packages", .array(packages.map { .string($0) })),
            ("serviceAccountEmail", .string(serviceAccount.clientEmail)), ("keyFile", .string(keyFile)),
            ("push", pushURL.map { .string($0) } ?? .null),
            ("pushAudience", pushURL.map { .string(pushAudience ?? $0) } ?? .null), ("pushEmail", .string(pushEmail)),
        ])
    }

    /// The client email and public key of an existing service-account JSON key file.
    private static func readKeyFile(_ path: String) throws -> SimulatedServiceAccount {
        struct KeyFile: Decodable {
            let client_email: String
            let private_key: String
            let private_key_id: String?
        }
        let data = try Parse.file(path, "--google-service-account-key", limit: Parse.maxServiceAccountKeyBytes)
        guard let file = try? JSONDecoder().decode(KeyFile.self, from: data) else {
            throw UsageError("--google-service-account-key \(path) is not a readable service-account JSON key file")
        }
        guard let key = try? PrivateKey(pem: file.private_key) else {
            throw UsageError("--google-service-account-key \(path) holds no usable private_key")
        }
        return SimulatedServiceAccount(clientEmail: file.client_email, publicKey: key.publicKey, privateKeyID: file.private_key_id)
    }
}
