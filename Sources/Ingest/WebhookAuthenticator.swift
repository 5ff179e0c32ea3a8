import Accounts
import AppStore
import Foundation
import GooglePlay
import Postgres
import StoreModel
import Synchronization

/// What ingest concluded about a webhook before storing it.
public enum Verdict: Sendable, Equatable {
    /// Signed by the store for a connection of this host's account: store it.
    case genuine
    /// No account has this host.
    case unknownHost
    /// Not from the store, or for nothing this account connects: answer `status`, store nothing. `code` is
    /// one of a fixed set (a metric label); `reason` says precisely why, for the sender and the log.
    case refused(status: Int, code: String, reason: String)
    /// Cannot be judged now (Google's keys, a connection's settings): 503, so the store retries.
    case unavailable(reason: String)
    /// The database cannot be reached: 503, and for a host known to have an account the outage is remembered
    /// (`OutageLog`).
    case databaseUnreachable(reason: String, knownHost: Bool)

    /// Whether settings changed since they were read could turn this answer into `genuine`.
    var mayBeStale: Bool {
        switch self {
        case .genuine: false
        case .unknownHost, .unavailable, .databaseUnreachable: true
        case .refused(let status, _, _): status == 401 || status == 404
        }
    }
}

/// Verifies each notification at receipt, as the worker will again: Apple's JWS and its x5c chain against
/// the connection's roots, bundle id, App Apple ID and environment; a Google push's OIDC token against the
/// connection's audience and push account. A forgery is refused before anything is stored, so nobody who
/// merely knows a tenant's host can fill its queue or its dead-letter table.
///
/// What it needs of the database is one query per host every `trustLifetime` (what the host's connections
/// trust, `HostTrust`); verifiers, with their chain caches, and Google's keys live across requests. A change
/// to a connection is seen within `trustLifetime`; the worker re-verifies with current settings anyway.
public final class WebhookAuthenticator: Sendable {
    static let trustLifetime: Duration = .seconds(5)
    /// Hosts whose trust is kept; any Host header costs a lookup, so the table must not grow without bound.
    static let maxHosts = 10_000

    private struct Entry<Value: Sendable>: Sendable {
        let trust: ConnectionTrust
        let value: Value
    }

    private struct Trust: Sendable {
        let loaded: ContinuousClock.Instant
        let trust: HostTrust?
    }

    /// Its own few connections, so that lookups for made-up hosts queue behind each other instead of taking
    /// the connections that commit genuine webhooks.
    private let pool: PostgresPool
    private let keyCaches: GoogleKeyCaches
    private let hosts = Mutex<[String: Trust]>([:])
    /// At most one lookup per host at a time; concurrent requests for the host share it.
    private let lookups = Mutex<[String: Task<HostTrust?, any Error>]>([:])
    private let apple = Mutex<[Int64: Entry<Result<NotificationVerifier, any Error>>]>([:])
    private let google = Mutex<[Int64: Entry<PushTokenVerifier>]>([:])

    public init(pool: PostgresPool, keyCaches: GoogleKeyCaches) {
        self.pool = pool
        self.keyCaches = keyCaches
    }

    /// Whether `host` is known to have an account (from the cache, however old).
    func isKnown(_ host: String) -> Bool {
        hosts.withLock { $0[host]?.trust != nil }
    }

    /// - Parameter signedPayload: an App Store body's `signedPayload`, as `WebhookBody.read` took it out.
    func authenticate(_ body: Data, from source: WebhookSource, signedPayload: String?, host: String,
                      authorization: String?, receivedAt: Date) async -> Verdict {
        var maxAge = Self.trustLifetime
        while true {
            let trust: HostTrust?
            let age: Duration
            do {
                (trust, age) = try await self.trust(of: host, maxAge: maxAge)
            } catch let error as PostgresError where error.code == .connectionLost {
                return .databaseUnreachable(reason: "cannot read the account's store connections: \(error)",
                                            knownHost: isKnown(host))
            } catch {
                return .unavailable(reason: "cannot read the account's store connections: \(error)")
            }
            let verdict: Verdict = if let trust {
                await verify(body, from: source, signedPayload: signedPayload, trust: trust, authorization: authorization,
                             receivedAt: receivedAt)
            } else {
                .unknownHost
            }
            // A refusal by settings read a while ago is judged again on fresh ones, once: a root, connection or
            // account added since (a deploy, the demo repointing its simulator) must not refuse genuine
            // notifications for the rest of `trustLifetime`. A flood of forgeries costs one reread per
            // `rereadInterval` and host, not one each.
            guard verdict.mayBeStale, age >= Self.rereadInterval, maxAge > .zero else { return verdict }
            maxAge = .zero
        }
    }

    /// Judges a stored webhook body again, as it would be at receipt, against what the account's connections
    /// trust now: what on-call reads beside a dead letter's notification. `receivedAt` is when it arrived (a push
    /// token's age is judged then).
    public func judge(_ body: Data, from source: WebhookSource, trust: HostTrust, authorization: String?,
                      receivedAt: Date) async -> Verdict {
        switch WebhookBody.read(body, from: source) {
        case .failure(let rejection): .refused(status: 400, code: "malformed", reason: rejection.reason)
        case .success(let signedPayload):
            await verify(body, from: source, signedPayload: signedPayload, trust: trust, authorization: authorization,
                         receivedAt: receivedAt)
        }
    }

    private func verify(_ body: Data, from source: WebhookSource, signedPayload: String?, trust: HostTrust,
                        authorization: String?, receivedAt: Date) async -> Verdict {
        switch source {
        case .apple: verifyApple(signedPayload ?? "", trust: trust)
        case .googlePlay: await verifyGoogle(body, authorization: authorization, trust: trust, receivedAt: receivedAt)
        }
    }

    /// Least age of a host's trust before a refusal makes it read again.
    static let rereadInterval: Duration = .milliseconds(250)

    /// The host's trust, from the cache when younger than `maxAge`, and how old it is.
    private func trust(of host: String, maxAge: Duration) async throws -> (HostTrust?, age: Duration) {
        let now = ContinuousClock.now
        if let cached = hosts.withLock({ $0[host] }), now - cached.loaded < maxAge { return (cached.trust, now - cached.loaded) }
        let pool = pool
        let lookup = lookups.withLock { lookups in
            if let running = lookups[host] { return running }
            let started = Task { try await pool.query(HostTrust.loading(host: host)) }
            lookups[host] = started
            return started
        }
        let result = await lookup.result
        lookups.withLock { lookups in if lookups[host] == lookup { lookups[host] = nil } }
        let trust = try result.get()
        remember(trust, of: host, at: now)
        return (trust, .zero)
    }

    /// Keeps a host's trust, making room when the table is full: first hosts without an account (what a flood
    /// of made-up `Host` headers adds), then expired ones, so real tenants keep their entries.
    private func remember(_ trust: HostTrust?, of host: String, at now: ContinuousClock.Instant) {
        hosts.withLock { hosts in
            if hosts.count >= Self.maxHosts { hosts = hosts.filter { $0.value.trust != nil } }
            if hosts.count >= Self.maxHosts { hosts = hosts.filter { now - $0.value.loaded < Self.trustLifetime } }
            if hosts.count >= Self.maxHosts { hosts.removeAll() }
            hosts[host] = Trust(loaded: now, trust: trust)
        }
    }

    // MARK: Apple

    private func verifyApple(_ signed: String, trust: HostTrust) -> Verdict {
        let routing: NotificationRouting
        do {
            routing = try NotificationRouting(unverified: signed)
        } catch let error as AppStoreVerificationError {
            return .refused(status: 400, code: error.code.description, reason: error.reason)
        } catch {
            return .refused(status: 400, code: "INVALID_JWT_FORMAT", reason: "\(error)")
        }
        let candidates = trust.connections(store: .apple, appIdentifier: routing.bundleID)
        // The connection of the notification's own environment if there is one; otherwise the app's only
        // connection, whose worker then records the notification as an environment mismatch.
        guard let connection = candidates.first(where: { $0.environment.rawValue == routing.environment?.rawValue })
            ?? candidates.first else {
            return .refused(status: 404, code: "no connection",
                            reason: "no App Store connection for bundle \(Self.quoted(routing.bundleID)) on this host")
        }
        let verifier: NotificationVerifier
        do {
            verifier = try appleVerifier(for: connection)
        } catch {
            return .unavailable(reason: "App Store connection \(connection.id) cannot verify notifications: \(error)")
        }
        do {
            _ = try verifier.verify(signed, claims: routing)
            return .genuine
        } catch let error as AppStoreVerificationError {
            if error.code == .retryableFailure { return .unavailable(reason: error.reason) }
            return .refused(status: error.code == .invalidFormat ? 400 : 401, code: error.code.description,
                            reason: error.reason)
        } catch {
            return .refused(status: 401, code: "VERIFICATION_FAILURE", reason: "\(error)")
        }
    }

    /// The connection's verifier, or why it cannot have one; either is kept while the connection's trust stays
    /// the same, so a misconfigured connection is not rebuilt (its PEM parsed) on every request.
    private func appleVerifier(for connection: ConnectionTrust) throws -> NotificationVerifier {
        if let entry = apple.withLock({ $0[connection.id] }), entry.trust == connection { return try entry.value.get() }
        let built = Result {
            try NotificationVerifier(roots: try AppleRoots.trusted(pem: connection.trustedRootsPEM), bundleID: connection.appIdentifier,
                                     appAppleID: connection.appAppleID,
                                     environment: AppStoreEnvironment(rawValue: connection.environment.rawValue))
        }
        apple.withLock { $0[connection.id] = Entry(trust: connection, value: built) }
        return try built.get()
    }

    // MARK: Google

    private func verifyGoogle(_ body: Data, authorization: String?, trust: HostTrust, receivedAt: Date) async -> Verdict {
        let notification: DeveloperNotification
        do {
            notification = try PubSubPush(body: body).developerNotification()
        } catch {
            return .refused(status: 400, code: "malformed", reason: "not a Play developer notification push: \(error.message)")
        }
        let candidates = trust.connections(store: .google, appIdentifier: notification.packageName)
        guard let connection = candidates.first(where: { $0.environment == .production }) ?? candidates.first else {
            return .refused(status: 404, code: "no connection",
                            reason: "no Google Play connection for package \(Self.quoted(notification.packageName)) on this host")
        }
        guard let authorization else {
            return .refused(status: 401, code: "missing token", reason: "the push carries no Authorization header")
        }
        guard let verifier = googleVerifier(for: connection) else {
            return .unavailable(reason: "Google Play connection \(connection.id) has no push audience and push service "
                                + "account to authenticate pushes with")
        }
        do {
            _ = try await verifier.verify(authorization: authorization, now: receivedAt)
            return .genuine
        } catch let error as PushTokenError {
            if error.isRetryable { return .unavailable(reason: error.reason) }
            return .refused(status: error.code == .malformed ? 400 : 401, code: error.code.description, reason: error.reason)
        } catch {
            return .refused(status: 401, code: "bad signature", reason: "\(error)")
        }
    }

    private func googleVerifier(for connection: ConnectionTrust) -> PushTokenVerifier? {
        guard let audience = connection.pushAudience, let account = connection.pushServiceAccount else { return nil }
        return google.withLock { verifiers in
            if let entry = verifiers[connection.id], entry.trust == connection { return entry.value }
            let verifier = PushTokenVerifier(audience: audience, serviceAccountEmail: account,
                                             keys: keyCaches.cache(for: connection.pushJWKSURL))
            verifiers[connection.id] = Entry(trust: connection, value: verifier)
            return verifier
        }
    }

    /// An app identifier the sender chose, for a message: short printable ones as they are.
    private static func quoted(_ text: String) -> String {
        text.utf8.count <= 255 && text.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) ? "\"\(text)\"" : "(unprintable)"
    }
}
