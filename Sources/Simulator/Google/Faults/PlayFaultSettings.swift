import HTTP

/// A bad push token, so StoreSync's push authentication can be tested against each way a push can be forged
/// or misdirected.
public enum PushTokenFault: String, Sendable, Codable, CaseIterable {
    /// `aud` is not the configured audience.
    case wrongAudience
    /// `email` is not the push service account.
    case wrongEmail
    /// `iss` is not Google's.
    case wrongIssuer
    /// `email_verified` is false.
    case emailNotVerified
    /// Issued two hours ago, expired one hour ago.
    case expired
    /// The header names a `kid` the key set does not publish.
    case unknownKey
    /// A valid token with one signature byte flipped.
    case tamperedSignature
    /// No `Authorization` header at all.
    case missing
}

/// Failures the simulated Play Store injects. Counts are consumed one per request (or push) as they happen.
public struct PlayFaultSettings: Sendable, Equatable, Codable {
    /// The next this many Play Developer API requests answer 429 with `Retry-After: retryAfterSeconds`.
    public var rateLimitedRequests = 0
    public var retryAfterSeconds: Int64 = 1
    /// The next this many API requests answer 500 `backendError`.
    public var failedRequests = 0
    /// The next this many API requests answer 401 `permissionDenied`, as when the service account lacks Play
    /// Console permissions.
    public var permissionDeniedRequests = 0
    /// Added to every API request before it is answered (the handler suspends; no thread waits).
    public var latencyMilliseconds: Int64 = 0
    /// The next this many messages are never delivered, as if Google never published them.
    public var droppedPushes = 0
    /// The next message is delivered this many extra times in a row, all with the same `messageId`.
    public var duplicatedPushCopies = 0
    /// The next `badPushTokens` messages carry `badPushToken` instead of a valid token, on every delivery.
    public var badPushTokens = 0
    public var badPushToken: PushTokenFault?

    public init() {}

    func validated() throws -> PlayFaultSettings {
        guard rateLimitedRequests >= 0, failedRequests >= 0, permissionDeniedRequests >= 0, droppedPushes >= 0,
              badPushTokens >= 0 else {
            throw SimulatorError(.invalidArgument, "fault counts must not be negative")
        }
        guard (0...100).contains(duplicatedPushCopies) else {
            throw SimulatorError(.invalidArgument, "a push is duplicated 0...100 times, not \(duplicatedPushCopies)")
        }
        guard (0...86_400).contains(retryAfterSeconds), (0...600_000).contains(latencyMilliseconds) else {
            throw SimulatorError(.invalidArgument, "retry-after is 0...86400 s and latency 0...600000 ms")
        }
        guard badPushTokens == 0 || badPushToken != nil else {
            throw SimulatorError(.invalidArgument, "say which bad push token to send (badPushToken)")
        }
        return self
    }
}

/// What happens to one message on its way out, decided when it is published.
struct PushFaultPlan: Sendable {
    var dropped = false
    var copies = 0
    var tokenFault: PushTokenFault?
}

/// The current fault settings, consumed under a lock by concurrent requests and pushes.
final class PlayFaultInjector: Sendable {
    private let settings = Locked(PlayFaultSettings())

    var current: PlayFaultSettings { settings.withLock { $0 } }

    func replace(_ new: PlayFaultSettings) throws {
        let checked = try new.validated()
        settings.withLock { $0 = checked }
    }

    func update(_ change: (inout PlayFaultSettings) -> Void) throws {
        try settings.withLock { value in
            var next = value
            change(&next)
            value = try next.validated()
        }
    }

    /// The fault for this API request, if any: 429 (with its `Retry-After` seconds), 500 or 401 — at most one,
    /// rate limiting first.
    func takeRequestFault() -> PlayAPIError? {
        settings.withLock { value in
            if value.rateLimitedRequests > 0 {
                value.rateLimitedRequests -= 1
                return .rateLimited(retryAfter: value.retryAfterSeconds)
            }
            if value.failedRequests > 0 {
                value.failedRequests -= 1
                return .backendError
            }
            if value.permissionDeniedRequests > 0 {
                value.permissionDeniedRequests -= 1
                return .permissionDenied
            }
            return nil
        }
    }

    /// The plan for the next message, consuming the push faults it uses.
    func takePushPlan() -> PushFaultPlan {
        settings.withLock { value in
            var plan = PushFaultPlan()
            if value.droppedPushes > 0 {
                value.droppedPushes -= 1
                plan.dropped = true
                return plan
            }
            plan.copies = value.duplicatedPushCopies
            value.duplicatedPushCopies = 0
            if value.badPushTokens > 0 {
                value.badPushTokens -= 1
                plan.tokenFault = value.badPushToken
                if value.badPushTokens == 0 { value.badPushToken = nil }
            }
            return plan
        }
    }

    var latency: Duration { .milliseconds(settings.withLock { $0.latencyMilliseconds }) }
}

/// The Google endpoints the simulator serves, named as method and path template.
public enum PlayEndpoint: String, Sendable, CaseIterable, Codable {
    case token = "POST /token"
    case certificates = "GET /oauth2/v3/certs"
    case subscriptionsV2 = "GET /androidpublisher/v3/applications/{packageName}/purchases/subscriptionsv2/tokens/{token}"
    case acknowledge = "POST /androidpublisher/v3/applications/{packageName}/purchases/subscriptions/{subscriptionId}/tokens/{token}:acknowledge"
    case order = "GET /androidpublisher/v3/applications/{packageName}/orders/{orderId}"
    case ordersBatchGet = "GET /androidpublisher/v3/applications/{packageName}/orders:batchGet"
    case voidedPurchases = "GET /androidpublisher/v3/applications/{packageName}/purchases/voidedpurchases"
}

/// Requests received per endpoint, whatever they were answered.
final class PlayRequestCounters: Sendable {
    private let counts = Locked<[PlayEndpoint: Int]>([:])

    func increment(_ endpoint: PlayEndpoint) {
        counts.withLock { $0[endpoint, default: 0] += 1 }
    }

    var snapshot: [PlayEndpoint: Int] { counts.withLock { $0 } }

    func reset() {
        counts.withLock { $0 = [:] }
    }
}
