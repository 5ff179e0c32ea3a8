import Crypto
import Foundation
import GooglePlay
import HTTP
import Logging
import Metrics
import Postgres
import Synchronization

/// The thin ingestion endpoints, `POST /webhook/apple` and `POST /webhook/google-play`.
///
/// Each request is checked (size — enforced by the server —, JSON of the store's outer shape, a known `Host`)
/// and verified at receipt (`WebhookAuthenticator`: the store's signature for one of the account's
/// connections; a forgery gets 400/401/404 and nothing is stored), then stored with its exact bytes, the headers the worker needs and the receive time as a job, and
/// answered 200 only once that has committed. Requests arriving together are stored by one statement and one
/// durable commit (group commit), so the disk's fsync rate does not cap the endpoint. A database that is down
/// or slow gets a 503 within a few seconds, which Apple and Pub/Sub both retry; nothing is ever acknowledged
/// that was not stored.
public struct IngestService: Sendable {
    static let statement = """
        SELECT ordinal, job_id FROM storesync_ingest($1::text[], $2::text[], $3::bytea[], $4::jsonb[], $5::timestamptz[])
        """

    /// One notification to store.
    struct Arrival: Sendable {
        let host: String
        let kind: String
        let body: Data
        let headers: String?
        let receivedAt: Date
    }

    private let pool: PostgresPool
    private let commits: GroupCommit<Arrival, Result<Int64?, PostgresError>>
    private let requests: Counter
    private let refusals: Counter
    private let authenticator: WebhookAuthenticator
    /// Connections for reading what hosts' connections trust, apart from those that commit webhooks.
    private let trustPool: PostgresPool
    static let trustPoolSize = 2
    private let outages = OutageLog()
    private let stopped = Switch(false)
    private let latency: Histogram
    private let logger = Logger(component: "ingest")
    private let accepting: Switch

    /// - Parameters:
    ///   - keyCaches: where Google's push-signing keys are fetched and kept (the only outbound HTTP ingest does).
    ///   - accepting: whether webhooks are stored from the start; `false` answers them 503 until `open()`, for
    ///     a process that listens before it has checked its database.
    public init(pool: PostgresPool, metrics: MetricsRegistry, keyCaches: GoogleKeyCaches, accepting: Bool = true) {
        self.pool = pool
        var trustConfiguration = pool.configuration
        trustConfiguration.poolSize = Self.trustPoolSize
        trustConfiguration.applicationName += "-trust"
        trustPool = PostgresPool(trustConfiguration)
        authenticator = WebhookAuthenticator(pool: trustPool, keyCaches: keyCaches)
        self.accepting = Switch(accepting)
        commits = GroupCommit(maxBatch: 200) { batch in await Self.store(batch, pool: pool) }
        requests = metrics.counter("storesync_http_requests_total", help: "HTTP requests by route and status.",
                                   labels: ["route", "status"])
        refusals = metrics.counter("storesync_webhook_refused_total",
                                   help: "Webhooks refused at receipt as not genuine or for no connection, by route and reason.",
                                   labels: ["route", "reason"])
        latency = metrics.histogram("storesync_ingest_duration_seconds",
                                    help: "Time from receiving a notification to its job being committed.",
                                    labels: ["route"])
    }

    /// Commits stored notifications with `flushers` overlapping commits until `close()`; run it for as long
    /// as the routes are served.
    public func run(flushers: Int = 4) async {
        await withDiscardingTaskGroup { group in
            for _ in 0..<max(1, flushers) { group.addTask { await commits.runFlusher() } }
        }
    }

    /// Remembers a 503 owed to the database and, for the first of an outage, starts offering the outage to the
    /// database once a second until it is taken: the first attempt after the database is back succeeds, whether
    /// or not a webhook arrives meanwhile.
    private func recordOutage(host: String, at time: Date) {
        guard outages.record(host: host, at: time) else { return }
        let (outages, pool, stopped) = (outages, pool, stopped)
        Task {
            while outages.isPending && !stopped.isOn {
                try? await Task.sleep(for: OutageLog.handOverInterval)
                await outages.handOver(pool: pool)
            }
        }
    }

    /// Starts storing webhooks (see `init`'s `accepting`).
    public func open() { accepting.turnOn() }

    /// Whether webhooks are stored yet: what `serve`'s readiness waits for.
    public var isAccepting: Bool { accepting.isOn }

    /// Lets `run()` commit what is pending and return; call after the server has stopped.
    public func close() async {
        stopped.turnOn()
        await commits.close()
        await trustPool.close()
    }

    /// Adds both webhook routes.
    public func install(into router: inout HTTPRouter) {
        for source in WebhookSource.allCases {
            router.route("POST", source.path) { request in await receive(request, from: source) }
        }
    }

    /// Counts a request the server turned away before any handler (404, 405, 408, 413) in
    /// `storesync_http_requests_total`, so refusals show up next to the answered webhooks; pass it as
    /// `HTTPServerConfiguration.onRejection`. The route label is the registered route or `unmatched`, never
    /// the raw path, so clients cannot add series.
    public func count(_ rejection: HTTPServerRejection) {
        requests.increment(rejection.route ?? "unmatched", String(rejection.status))
    }

    func receive(_ request: HTTPRequest, from source: WebhookSource) async -> HTTPResponse {
        let started = ContinuousClock.now
        let receivedAt = Date()
        let response = await store(request, from: source, receivedAt: receivedAt)
        requests.increment(source.path, String(response.status))
        if response.status == 200 { latency.observe(ContinuousClock.now - started, source.path) }
        return response
    }

    private func store(_ request: HTTPRequest, from source: WebhookSource, receivedAt: Date) async -> HTTPResponse {
        let host = HostName.fromHeader(request.header("host"))
        guard accepting.isOn else {
            // Nothing is known of hosts yet; the workers sweep only those that turn out to have an account.
            if let host { recordOutage(host: host, at: receivedAt) }
            return .error(503, "starting: waiting for the database")
        }
        guard let host else {
            // Not an account that does not exist but a request no account could match: the sender's mistake.
            let reason = request.header("host") == nil ? "missing Host header" : "malformed Host header"
            logger.warning("webhook refused", ["route": .string(source.path), "reason": .string(reason)])
            return .error(400, reason)
        }
        let signedPayload: String?
        switch WebhookBody.read(request.body, from: source) {
        case .success(let signed): signedPayload = signed
        case .failure(let rejection):
            logger.warning("webhook body rejected", [
                "route": .string(source.path), "host": .string(host), "reason": .string(rejection.reason),
                "bytes": .int(request.body.count), "sha256": .string(Hex.encode(Digest.sha256(request.body))),
            ])
            return .error(400, rejection.reason)
        }
        let authorization = source == .googlePlay ? request.header("authorization") : nil
        switch await authenticator.authenticate(request.body, from: source, signedPayload: signedPayload, host: host,
                                                authorization: authorization, receivedAt: receivedAt) {
        case .genuine: break
        case .unknownHost:
            logger.info("webhook for an unknown host", ["route": .string(source.path), "host": .string(host)])
            return .error(404, "unknown host")
        case .refused(let status, let code, let reason):
            refusals.increment(source.path, code)
            logger.warning("webhook refused at receipt; nothing stored", [
                "route": .string(source.path), "host": .string(host), "status": .int(status), "code": .string(code),
                "reason": .string(String(reason.prefix(500))), "sha256": .string(Hex.encode(Digest.sha256(request.body))),
            ])
            // The sender learns which check failed, never the connection's settings the reason may quote.
            return .error(status, "notification not accepted: \(code)")
        case .databaseUnreachable(let reason, let knownHost):
            if knownHost { recordOutage(host: host, at: receivedAt) }
            logger.error("cannot read the database to verify a webhook; answering 503 so the store retries", [
                "route": .string(source.path), "host": .string(host), "reason": .string(String(reason.prefix(500))),
            ])
            return .error(503, "temporarily unavailable")
        case .unavailable(let reason):
            logger.error("cannot verify a webhook now; answering 503 so the store retries", [
                "route": .string(source.path), "host": .string(host), "reason": .string(String(reason.prefix(500))),
            ])
            return .error(503, "temporarily unavailable")
        }
        let headers = authorization.map { #"{"authorization":\#(JSON.quoted($0))}"# }
        do {
            let arrival = Arrival(host: host, kind: source.jobKind.name, body: request.body, headers: headers,
                                  receivedAt: receivedAt)
            guard let id = try await commits.submit(arrival).get() else {
                logger.info("webhook for an unknown host", ["route": .string(source.path), "host": .string(host)])
                return .error(404, "unknown host")
            }
            logger.debug("notification stored", ["route": .string(source.path), "job_id": .int(Int(id))])
            return .json(200, #"{"stored":true}"#)
        } catch {
            // Only a database out of reach: a pool that is merely busy (a flood) is no outage to sweep after.
            if error.code == .connectionLost { recordOutage(host: host, at: receivedAt) }
            logger.error("could not store a notification; answering 503 so the store retries", [
                "route": .string(source.path), "host": .string(host), "error": .string("\(error)"),
            ])
            return .error(503, "temporarily unavailable")
        }
    }
}

extension IngestService {
    /// Stores a batch in one statement; every arrival shares the batch's fate.
    static func store(_ batch: [Arrival], pool: PostgresPool) async -> [Result<Int64?, PostgresError>] {
        do {
            let rows = try await pool.run { connection in
                try connection.query(statement, [
                    PostgresArray(batch.map(\.host)), PostgresArray(batch.map(\.kind)), PostgresArray(batch.map(\.body)),
                    PostgresArray(batch.map(\.headers)), PostgresArray(batch.map(\.receivedAt)),
                ])
            }
            var ids = [Int64?](repeating: nil, count: batch.count)
            for row in rows {
                ids[try row.decode(0, as: Int.self) - 1] = try row.decodeOptional(1, as: Int64.self)
            }
            return ids.map { .success($0) }
        } catch {
            let failure = error as? PostgresError ?? PostgresError(.other, message: "\(error)")
            return Array(repeating: .failure(failure), count: batch.count)
        }
    }
}

/// A flag that only ever goes from off to on, read on every request.
private final class Switch: Sendable {
    private let on: Atomic<Bool>

    init(_ initially: Bool) { on = Atomic(initially) }

    var isOn: Bool { on.load(ordering: .acquiring) }

    func turnOn() { on.store(true, ordering: .releasing) }
}
