import Foundation
import HTTP
import StrictJSON

/// The App Store Server API calls the mirror needs, for one store connection. Every signed payload in an
/// answer is verified before it is returned; failures are `AppStoreAPIError`s that say whether to retry.
///
/// One client per connection, shared by all of a worker's jobs: it holds the connection's bearer token
/// (signed once, reused until shortly before it expires) and its rate limits, and sends over the shared
/// `HTTPClient`, so concurrent calls cost no threads.
public final class AppStoreAPIClient: Sendable {
    public let configuration: AppStoreAPIConfiguration
    private let verifier: SignedDataVerifier
    private let http: HTTPClient
    private let tokens: AppStoreTokenCache
    private let limiter: AppStoreRateLimiter
    private let baseURL: String
    private let now: @Sendable () -> Date
    private let observe: (@Sendable (AppStoreAPICall) -> Void)?

    /// - Parameters:
    ///   - verifier: the connection's verifier; its bundle id and environment must be the configuration's.
    ///   - now: the clock for token times, signed-data validation and `Retry-After`; tests pass their own.
    ///   - observe: told about every request sent (for metrics: on-call watches store errors and latency).
    /// - Throws: `.invalidConfiguration` when the settings contradict each other or Apple's limits.
    public init(configuration: AppStoreAPIConfiguration, verifier: SignedDataVerifier, httpClient: HTTPClient,
                now: @escaping @Sendable () -> Date = { Date() },
                observe: (@Sendable (AppStoreAPICall) -> Void)? = nil) throws(AppStoreAPIError) {
        func invalid(_ reason: String) -> AppStoreAPIError { AppStoreAPIError(.invalidConfiguration, reason) }
        guard verifier.bundleID == configuration.bundleID else {
            throw invalid("the verifier checks bundle id \(verifier.bundleID), the connection is \(configuration.bundleID)")
        }
        guard verifier.environment.rawValue == configuration.environment.rawValue else {
            throw invalid("the verifier checks environment \(verifier.environment), the connection is "
                          + configuration.environment.rawValue)
        }
        var base = configuration.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        guard base.hasPrefix("https://") || base.hasPrefix("http://"), !base.contains("?"), !base.contains("#") else {
            throw invalid("base URL \(configuration.baseURL) is not an http(s) URL without query or fragment")
        }
        let lifetime = configuration.tokenLifetime
        guard lifetime <= AppStoreAPIToken.maximumLifetime, configuration.tokenRenewalMargin >= .zero,
              configuration.tokenRenewalMargin < lifetime else {
            throw invalid("token lifetime \(lifetime) must be at most 60 minutes and longer than the renewal margin "
                          + "\(configuration.tokenRenewalMargin)")
        }
        let limits = configuration.rateLimits
        for family in AppStoreEndpointFamily.allCases where limits[family].perSecond < 1 || limits[family].burst < 1 {
            throw invalid("the \(family.rawValue) rate limit needs at least 1 request per second and a burst of 1")
        }
        guard limits.maximumWait >= .zero, configuration.maxHistoryPages >= 1, configuration.requestTimeout > .zero else {
            throw invalid("maximum wait, history pages and request timeout must be positive")
        }
        let signer: AppStoreAPIToken
        do {
            signer = try AppStoreAPIToken(keyID: configuration.keyID, issuerID: configuration.issuerID,
                                          bundleID: configuration.bundleID, privateKey: configuration.privateKey)
        } catch {
            throw invalid("the in-app purchase key is unusable: \(error)")
        }
        self.configuration = configuration
        self.verifier = verifier
        http = httpClient
        tokens = AppStoreTokenCache(signer: signer, lifetime: lifetime, renewalMargin: configuration.tokenRenewalMargin,
                                    now: now)
        limiter = AppStoreRateLimiter(limits)
        baseURL = base
        self.now = now
        self.observe = observe
    }

    /// Get All Subscription Statuses for the customer's subscriptions in the group(s) of `transactionID`
    /// (any transaction of theirs). Throws `AppStoreAPIError`, or `CancellationError` when the task is cancelled.
    public func subscriptionStatuses(transactionID: String) async throws -> SubscriptionStatuses {
        let call = Call("GET", "/inApps/v1/subscriptions/\(try Self.pathSegment(transactionID))")
        let response = try await send(.subscriptionStatuses, call)
        let answer = try Self.decode(StatusResponse.self, response, call)
        guard let data = answer.data else { throw Self.invalid(call, "the answer has no data array") }
        let now = now()
        let groups = try data.enumerated().map { groupIndex, group in
            let entries = try (group.lastTransactions ?? []).enumerated().map { index, item in
                try verifiedEntry(item, at: "data[\(groupIndex)].lastTransactions[\(index)]", call: call, now: now)
            }
            return SubscriptionStatuses.Group(subscriptionGroupIdentifier: group.subscriptionGroupIdentifier,
                                              lastTransactions: entries)
        }
        return SubscriptionStatuses(environment: answer.environment, bundleID: answer.bundleId,
                                    appAppleID: answer.appAppleId, groups: groups)
    }

    /// Get Transaction History (v2) of the customer of `transactionID`, ascending by modification, from
    /// `revision` (nil or empty: from the start). Follows `hasMore` for at most `maxHistoryPages` pages; the result
    /// says whether more remain and the revision to continue from. Throws `AppStoreAPIError` (`.invalidRevision`
    /// when Apple refuses `revision`) or `CancellationError`.
    public func transactionHistory(transactionID: String, revision: String? = nil) async throws -> TransactionHistory {
        let path = "/inApps/v2/history/\(try Self.pathSegment(transactionID))"
        var revision = revision?.isEmpty == true ? nil : revision
        var transactions: [Verified<TransactionPayload>] = []
        var hasMore = true
        var pages = 0
        let now = now()
        while hasMore && pages < configuration.maxHistoryPages {
            let query = (revision.map { "revision=\(PercentEncoding.encode($0))&" } ?? "") + "sort=ASCENDING"
            let call = Call("GET", "\(path)?\(query)")
            let page = try Self.decode(HistoryResponse.self, try await send(.transactionHistory, call), call)
            guard let signed = page.signedTransactions, let more = page.hasMore else {
                throw Self.invalid(call, "the answer lacks signedTransactions or hasMore")
            }
            if more {
                guard let next = page.revision, !next.isEmpty, next != revision else {
                    throw Self.invalid(call, "hasMore is true but the revision did not advance")
                }
            }
            for (index, jws) in signed.enumerated() {
                transactions.append(try Self.verifying("signedTransactions[\(index)]", call) {
                    try verifier.verifiedTransaction(jws, now: now)
                })
            }
            revision = page.revision ?? revision
            hasMore = more
            pages += 1
        }
        return TransactionHistory(transactions: transactions, revision: revision, hasMore: hasMore)
    }

    /// Send Consumption Information (v2) for the disputed `transactionID`. Validates `request` first (a
    /// violation throws `.invalidRequest` and sends nothing). Apple answers 202 Accepted. Throws
    /// `AppStoreAPIError` or `CancellationError`.
    public func sendConsumption(transactionID: String, request: ConsumptionRequest) async throws {
        let call = Call("PUT", "/inApps/v2/transactions/consumption/\(try Self.pathSegment(transactionID))")
        try request.validate()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body: Data
        do {
            body = try encoder.encode(request)
        } catch {
            throw AppStoreAPIError(.invalidRequest, "\(call): the consumption request does not encode: \(error)")
        }
        _ = try await send(.consumption, call, body: body)
    }

    /// Get Notification History: the notifications Apple signed for the app between `start` and `end`
    /// (only those never delivered successfully with `onlyFailures`), one page of up to 20 from
    /// `paginationToken`. The signed payloads are returned as Apple sent them — they are verified when their
    /// notification job runs, like a delivered one.
    public func notificationHistory(start: Date, end: Date, onlyFailures: Bool,
                                    paginationToken: String? = nil) async throws -> NotificationHistoryPage {
        let query = paginationToken.map { "?paginationToken=\(PercentEncoding.encode($0))" } ?? ""
        let call = Call("POST", "/inApps/v1/notifications/history\(query)")
        let request: [String: Any] = ["startDate": Int64(start.timeIntervalSince1970 * 1000),
                                      "endDate": Int64(end.timeIntervalSince1970 * 1000), "onlyFailures": onlyFailures]
        let body: Data
        do {
            body = try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys])
        } catch {
            throw AppStoreAPIError(.invalidRequest, "\(call): the request does not encode: \(error)")
        }
        let page = try Self.decode(NotificationHistoryResponse.self, try await send(.notificationHistory, call, body: body), call)
        guard let items = page.notificationHistory, let hasMore = page.hasMore else {
            throw Self.invalid(call, "the answer lacks notificationHistory or hasMore")
        }
        if hasMore, page.paginationToken?.isEmpty != false {
            throw Self.invalid(call, "hasMore is true but there is no paginationToken")
        }
        return NotificationHistoryPage(signedPayloads: items.compactMap(\.signedPayload), hasMore: hasMore,
                                       paginationToken: hasMore ? page.paginationToken : nil)
    }

    // MARK: - Requests

    /// One request's method and target (path and query), which also name it in error messages.
    private struct Call: CustomStringConvertible {
        let method: String
        let target: String

        init(_ method: String, _ target: String) {
            self.method = method
            self.target = target
        }

        var description: String { "\(method) \(target)" }
    }

    /// Waits for a rate-limit slot, sends `call` with the bearer token and returns a 2xx response; anything
    /// else is thrown classified.
    private func send(_ family: AppStoreEndpointFamily, _ call: Call, body: Data? = nil) async throws -> HTTPClientResponse {
        try await limiter.acquire(family)
        let token = try await tokens.token()
        var headers: [(name: String, value: String)] = [("Authorization", "Bearer \(token)"), ("Accept", "application/json")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let request = HTTPClientRequest(method: call.method, url: baseURL + call.target, headers: headers, body: body,
                                        timeout: configuration.requestTimeout)
        let response: HTTPClientResponse
        let started = ContinuousClock.now
        do {
            response = try await http.send(request)
        } catch let error as HTTPClientError {
            observe?(AppStoreAPICall(family: family, status: nil, duration: ContinuousClock.now - started))
            throw AppStoreAPIError(transport: error, call: "\(call)")
        }
        observe?(AppStoreAPICall(family: family, status: response.status, duration: ContinuousClock.now - started))
        guard (200...299).contains(response.status) else {
            if response.status == 401 { await tokens.discard(token) }
            throw AppStoreAPIError.classify(response, call: "\(call)", now: now())
        }
        return response
    }

    /// A transaction id as a path segment. Apple's ids are digits; anything that could change the path or
    /// add a query is refused before it reaches a URL.
    private static func pathSegment(_ id: String) throws(AppStoreAPIError) -> String {
        guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy({ idBytes.contains($0) }) else {
            throw AppStoreAPIError(.invalidRequest, "transaction id \(id.prefix(70).debugDescription) is not 1 to 64 "
                                   + "letters, digits, '-' or '_'")
        }
        return id
    }

    private static let idBytes = Set((PercentEncoding.alphanumerics + "-_").utf8)

    // MARK: - Answers

    private func verifiedEntry(_ item: StatusResponse.Item, at location: String, call: Call, now: Date)
        throws -> SubscriptionStatuses.LastTransaction
    {
        guard let status = item.status, let original = item.originalTransactionId, let signed = item.signedTransactionInfo else {
            throw Self.invalid(call, "\(location) lacks status, originalTransactionId or signedTransactionInfo")
        }
        let transaction = try Self.verifying("\(location).signedTransactionInfo", call) {
            try verifier.verifiedTransaction(signed, now: now)
        }
        let renewal = try item.signedRenewalInfo.map { jws in
            try Self.verifying("\(location).signedRenewalInfo", call) { try verifier.verifiedRenewalInfo(jws, now: now) }
        }
        // The entry's own originalTransactionId is unsigned: the signed payloads decide, and must agree.
        let signedOriginal = transaction.payload.originalTransactionId
        guard signedOriginal == original else {
            throw Self.invalid(call, "\(location) names originalTransactionId \(original) but its signed transaction "
                               + "says \(signedOriginal ?? "nothing")")
        }
        if let renewalOriginal = renewal?.payload.originalTransactionId, renewalOriginal != original {
            throw Self.invalid(call, "\(location) names originalTransactionId \(original) but its signed renewal "
                               + "info says \(renewalOriginal)")
        }
        return SubscriptionStatuses.LastTransaction(status: status, originalTransactionID: original,
                                                    transaction: transaction, renewalInfo: renewal)
    }

    private static func verifying<T>(_ what: String, _ call: Call, _ body: () throws -> T) throws(AppStoreAPIError) -> T {
        do {
            return try body()
        } catch let error as AppStoreVerificationError {
            throw AppStoreAPIError(.verificationFailed, "\(call): \(what) failed verification: \(error)", verification: error)
        } catch {
            throw invalid(call, "\(what) is unusable: \(error)")
        }
    }

    private static func decode<T: JSONReadable>(_ type: T.Type, _ response: HTTPClientResponse, _ call: Call)
        throws(AppStoreAPIError) -> T
    {
        do {
            return try JSONReader.read(response.body, T.init(json:))
        } catch {
            throw invalid(call, "the body is not a \(type) JSON object (\(response.body.count) bytes): \(error)")
        }
    }

    private static func invalid(_ call: Call, _ reason: String) -> AppStoreAPIError {
        AppStoreAPIError(.invalidResponse, "\(call): \(reason)")
    }
}

/// One request the client sent, as its observer sees it.
public struct AppStoreAPICall: Sendable {
    public let family: AppStoreEndpointFamily
    /// The HTTP status, or `nil` when no answer arrived.
    public let status: Int?
    public let duration: Duration
}

/// One page of Get Notification History.
public struct NotificationHistoryPage: Sendable {
    public let signedPayloads: [String]
    public let hasMore: Bool
    /// Where the next page starts; `nil` on the last page.
    public let paginationToken: String?
}

