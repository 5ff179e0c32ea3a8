import Crypto
import Foundation
import HTTP

/// One app in the simulated Play Store and how long its subscriptions' periods last. Fixed lengths (not
/// calendar months) keep scenarios exact; licence testers get Google's accelerated periods.
public struct SimulatedPlayApp: Sendable {
    public var packageName: String
    public var renewalPeriod: Duration = .seconds(30 * 86_400)
    /// Access continues this long after a failed renewal (Play's grace period).
    public var gracePeriod: Duration = .seconds(7 * 86_400)
    /// Account hold after the grace period: Google's 60 days minus the grace period.
    public var accountHoldPeriod: Duration = .seconds(53 * 86_400)
    /// A licence tester's monthly plan renews every 5 minutes, its grace lasts 5 and its hold 10.
    public var testRenewalPeriod: Duration = .seconds(300)
    public var testGracePeriod: Duration = .seconds(300)
    public var testAccountHoldPeriod: Duration = .seconds(600)
    /// ISO 3166-1 alpha-2 billing country of purchases that do not name one.
    public var regionCode = "US"

    public init(packageName: String) {
        self.packageName = packageName
    }

    func periods(test: Bool) -> (renewal: Duration, grace: Duration, hold: Duration) {
        test ? (testRenewalPeriod, testGracePeriod, testAccountHoldPeriod) : (renewalPeriod, gracePeriod, accountHoldPeriod)
    }
}

/// The service account whose JWT assertions the token endpoint accepts: the public half of the key in the
/// JSON key file StoreSync is configured with.
public struct SimulatedServiceAccount: Sendable {
    public var clientEmail: String
    public var publicKey: PublicKey
    /// The key file's `private_key_id`; when set, an assertion naming another `kid` is refused.
    public var privateKeyID: String?

    public init(clientEmail: String, publicKey: PublicKey, privateKeyID: String? = nil) {
        self.clientEmail = clientEmail
        self.publicKey = publicKey
        self.privateKeyID = privateKeyID
    }
}

/// The push subscription: where Pub/Sub posts, and the OIDC identity it signs its tokens with — the audience
/// and service account StoreSync's push verifier is configured to expect.
public struct PlayPushTarget: Sendable {
    public var url: String
    /// Sent as the `Host` header instead of the URL's host, so one local ingest can serve several accounts.
    public var host: String?
    /// The token's `aud`; Pub/Sub defaults it to the push endpoint URL.
    public var audience: String
    /// The push service account: the token's `email`.
    public var serviceAccountEmail: String
    /// Its numeric id: the token's `sub` and `azp`.
    public var serviceAccountID = "113774264463038321964"
    /// `projects/{project}/subscriptions/{name}`, as the envelope's `subscription`.
    public var subscription = PlayPushTarget.defaultSubscription
    /// The subscription name pushes carry unless configured otherwise (also when no target is configured).
    public static let defaultSubscription = "projects/storesync-simulator/subscriptions/play-rtdn"
    /// Pub/Sub's push request timeout is the subscription's acknowledgement deadline (10 s by default).
    public var timeout: Duration = .seconds(10)

    public init(url: String, audience: String? = nil, serviceAccountEmail: String, host: String? = nil) {
        self.url = url
        self.audience = audience ?? url
        self.serviceAccountEmail = serviceAccountEmail
        self.host = host
    }
}

/// How Pub/Sub redelivers a push that was not acknowledged (any status but 102, 200, 201, 202, 204, or no
/// answer): exponential backoff from `minimumBackoff` doubling up to `maximumBackoff`, for at most
/// `maxAttempts` deliveries in all. Pub/Sub's defaults are 10 s and 600 s for seven days; tests shorten both.
public struct PushRetryPolicy: Sendable, Equatable, Codable {
    public var minimumBackoff: Duration = .seconds(10)
    public var maximumBackoff: Duration = .seconds(600)
    public var maxAttempts = 5

    public init() {}

    public init(minimumBackoff: Duration, maximumBackoff: Duration, maxAttempts: Int) {
        self.minimumBackoff = minimumBackoff
        self.maximumBackoff = maximumBackoff
        self.maxAttempts = maxAttempts
    }

    func validated() throws -> PushRetryPolicy {
        guard minimumBackoff >= .zero, minimumBackoff <= maximumBackoff, maximumBackoff <= .seconds(600) else {
            throw SimulatorError(.invalidConfiguration, "push backoff must satisfy 0 ≤ minimum ≤ maximum ≤ 600 s")
        }
        guard (1...100).contains(maxAttempts) else {
            throw SimulatorError(.invalidConfiguration, "push attempts must be 1...100, not \(maxAttempts)")
        }
        return self
    }
}

/// What a `PlaySimulator` serves and where it pushes notifications; checked when the simulator starts.
public struct PlaySimulatorConfiguration: Sendable {
    /// Where the simulated Play Store listens; port 0 picks a free port (read it from `PlaySimulator.port`).
    public var host = "127.0.0.1"
    public var port: UInt16 = 0
    public var apps: [SimulatedPlayApp]
    public var serviceAccount: SimulatedServiceAccount
    /// `nil` records pushes (for tests) without sending them.
    public var push: PlayPushTarget?
    public var pushRetry = PushRetryPolicy()
    /// Settings of the client that pushes (a CA file for an HTTPS ingest, timeouts).
    public var pushClient = HTTPClientConfiguration()
    /// The key push tokens are signed with (RSA, 2048 bits or more); generated when `nil`.
    public var pushSigningKey: PrivateKey?
    /// The `Cache-Control: max-age` of the key set, which tells verifiers how long to keep it.
    public var jwksMaxAge: Duration = .seconds(3600)
    /// The `expires_in` of access tokens; Google's is 3599 s.
    public var accessTokenLifetime: Duration = .seconds(3599)
    /// The simulated clock's start; it moves only when a scenario moves it, so runs are reproducible.
    public var clockStart = Date()

    public init(apps: [SimulatedPlayApp], serviceAccount: SimulatedServiceAccount) {
        self.apps = apps
        self.serviceAccount = serviceAccount
    }

    func validated() throws -> [String: SimulatedPlayApp] {
        guard !apps.isEmpty else { throw SimulatorError(.invalidConfiguration, "configure at least one Play app") }
        var byPackage: [String: SimulatedPlayApp] = [:]
        for app in apps {
            guard Self.isPackageName(app.packageName) else {
                throw SimulatorError(.invalidConfiguration,
                                     "package name \(app.packageName.prefix(64).debugDescription) is not like com.example.app")
            }
            guard byPackage[app.packageName] == nil else {
                throw SimulatorError(.invalidConfiguration, "package \(app.packageName) is configured twice")
            }
            let periods = [("renewal", app.renewalPeriod), ("grace", app.gracePeriod), ("account hold", app.accountHoldPeriod),
                           ("test renewal", app.testRenewalPeriod), ("test grace", app.testGracePeriod),
                           ("test account hold", app.testAccountHoldPeriod)]
            for (name, period) in periods where period.wholeMilliseconds < 1 {
                throw SimulatorError(.invalidConfiguration, "the \(name) period must be at least 1 ms")
            }
            guard Self.isRegionCode(app.regionCode) else {
                throw SimulatorError(.invalidConfiguration, "region code must be two capital letters, not \(app.regionCode.prefix(8))")
            }
            byPackage[app.packageName] = app
        }
        guard !serviceAccount.clientEmail.isEmpty, serviceAccount.clientEmail.utf8.count <= 255 else {
            throw SimulatorError(.invalidConfiguration, "the service account's client email must have 1 to 255 characters")
        }
        guard case .rsa = serviceAccount.publicKey.kind else {
            throw SimulatorError(.invalidConfiguration, "a service-account key is RSA, not \(serviceAccount.publicKey.kind)")
        }
        if let push {
            guard push.url.hasPrefix("http://") || push.url.hasPrefix("https://") else {
                throw SimulatorError(.invalidConfiguration, "the push URL must be http:// or https://")
            }
            guard !push.audience.isEmpty, !push.serviceAccountEmail.isEmpty, !push.subscription.isEmpty else {
                throw SimulatorError(.invalidConfiguration, "the push audience, service account and subscription must not be empty")
            }
        }
        if let pushSigningKey {
            guard case .rsa(let bits) = pushSigningKey.kind, bits >= 2048 else {
                throw SimulatorError(.invalidConfiguration, "the push signing key must be RSA of at least 2048 bits")
            }
        }
        _ = try pushRetry.validated()
        guard accessTokenLifetime >= .seconds(1), accessTokenLifetime <= .seconds(86_400),
              jwksMaxAge >= .zero, jwksMaxAge <= .seconds(86_400) else {
            throw SimulatorError(.invalidConfiguration, "the access-token lifetime is 1 s...1 day and the JWKS max-age 0...1 day")
        }
        return byPackage
    }

    /// Android application ids: dot-separated segments of letters, digits and underscores, each starting
    /// with a letter, at least two segments.
    static func isPackageName(_ name: String) -> Bool {
        guard (3...255).contains(name.utf8.count) else { return false }
        let segments = name.split(separator: ".", omittingEmptySubsequences: false)
        func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        return segments.count >= 2 && segments.allSatisfy { segment in
            guard let first = segment.utf8.first, isLetter(first) else { return false }
            return segment.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
        }
    }

    static func isRegionCode(_ code: String) -> Bool {
        code.utf8.count == 2 && code.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }
}
