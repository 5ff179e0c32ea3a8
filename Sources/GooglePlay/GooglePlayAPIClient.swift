import Foundation
import HTTP
import StrictJSON

/// The Play Developer API calls the mirror needs, for one store connection: subscription state, the charge of an
/// order, acknowledgement, and voided purchases. Failures are `GooglePlayAPIError`s that say whether to retry.
///
/// One client per connection, shared by all of a worker's jobs: it holds the connection's access token (fetched
/// once, reused until shortly before it expires) and its pacing per quota bucket, and sends over the shared
/// `HTTPClient`, so concurrent calls cost no threads.
public final class GooglePlayAPIClient: Sendable {
    public let configuration: GooglePlayAPIConfiguration
    private let http: HTTPClient
    private let tokens: GoogleAccessTokenCache
    private let limiter: GooglePlayRateLimiter
    private let applicationURL: String
    private let now: @Sendable () -> Date
    private let observe: (@Sendable (GooglePlayAPICall) -> Void)?

    /// - Parameters:
    ///   - now: the clock for the assertion, the access token's expiry and `Retry-After`; tests pass their own.
    ///   - observe: told about every request sent, the token endpoint's included (for metrics: on-call watches
    ///     store errors and latency).
    /// - Throws: `.invalidConfiguration` when the settings contradict each other or Google's limits.
    public init(configuration: GooglePlayAPIConfiguration, httpClient: HTTPClient,
                now: @escaping @Sendable () -> Date = { Date() },
                observe: (@Sendable (GooglePlayAPICall) -> Void)? = nil) throws(GooglePlayAPIError) {
        func invalid(_ reason: String) -> GooglePlayAPIError { GooglePlayAPIError(.invalidConfiguration, reason) }
        try configuration.validateConnection()
        let package = configuration.packageName
        let email = configuration.clientEmail
        var base = configuration.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        let margin = configuration.tokenRenewalMargin
        guard margin >= .zero, margin < .seconds(1800), configuration.assertionBackdate >= .zero,
              configuration.assertionBackdate <= .seconds(300) else {
            throw invalid("the token renewal margin must be 0 to 30 minutes and the assertion backdate 0 to 5 minutes")
        }
        let limits = configuration.rateLimits
        for family in GooglePlayEndpointFamily.allCases {
            if let limit = limits[family], limit.perMinute < 1 || limit.burst < 1 {
                throw invalid("the \(family.rawValue) rate limit needs at least 1 request per minute and a burst of 1")
            }
        }
        guard limits.maximumWait >= .zero, configuration.requestTimeout > .zero else {
            throw invalid("maximum wait and request timeout must be positive")
        }
        self.configuration = configuration
        http = httpClient
        tokens = GoogleAccessTokenCache(
            settings: .init(clientEmail: email, privateKey: configuration.privateKey, privateKeyID: configuration.privateKeyID,
                            tokenURI: configuration.tokenURI, renewalMargin: margin,
                            assertionBackdate: configuration.assertionBackdate, requestTimeout: configuration.requestTimeout),
            http: httpClient, now: now, observe: observe)
        limiter = GooglePlayRateLimiter(limits)
        applicationURL = "\(base)/androidpublisher/v3/applications/\(package)"
        self.now = now
        self.observe = observe
    }

    /// `purchases.subscriptionsv2.get`: the current state of the purchase `token`. Throws `GooglePlayAPIError`
    /// (`.gone` for a token expired too long ago, `.notFound` for one of another app), or `CancellationError`.
    public func subscription(token: String) async throws -> SubscriptionPurchaseV2 {
        let call = Call("GET", "/purchases/subscriptionsv2/tokens/\(try Self.pathSegment(token, "purchase token"))")
        let response = try await send(.subscriptions, call)
        return try Self.decoding(call, response) { try SubscriptionPurchaseV2(json: response.body) }
    }

    /// `orders.get`: the charge `id` stands for, with its exact total and tax. Throws `GooglePlayAPIError` or
    /// `CancellationError`.
    public func order(id: String) async throws -> GooglePlayOrder {
        let call = Call("GET", "/orders/\(try Self.pathSegment(id, "order id"))")
        let response = try await send(.orders, call)
        let order = try Self.decoding(call, response) { try GooglePlayOrder(json: response.body) }
        guard order.orderId == id else {
            throw GooglePlayAPIError(.invalidResponse, "\(call) answered order \(order.orderId ?? "without orderId")")
        }
        return order
    }

    /// `orders.batchGet`: several charges in one request of the Orders quota bucket, each as `order(id:)` answers
    /// it, in the order asked (matched by id). Google fails the whole request when any id is unknown (`.notFound`), so ids known
    /// to exist go here and guesses go to `order(id:)`. 1…1000 distinct ids whose query fits `maxBatchQueryBytes`
    /// (`batches(of:)` splits a longer list). Throws `GooglePlayAPIError` or `CancellationError`.
    public func orders(ids: [String]) async throws -> [GooglePlayOrder] {
        guard (1...Self.maxBatchIDs).contains(ids.count), Set(ids).count == ids.count else {
            throw GooglePlayAPIError(.invalidRequest, "orders.batchGet takes 1 to \(Self.maxBatchIDs) distinct order ids, not \(ids.count)")
        }
        for id in ids { _ = try Self.pathSegment(id, "order id") }
        let query = PercentEncoding.form(ids.map { ("orderIds", $0) })
        guard query.utf8.count <= Self.maxBatchQueryBytes else {
            throw GooglePlayAPIError(.invalidRequest, "orders.batchGet's \(ids.count) order ids make a query of \(query.utf8.count) bytes, "
                                     + "over \(Self.maxBatchQueryBytes)")
        }
        let call = Call("GET", "/orders:batchGet?" + query, summary: "/orders:batchGet (\(ids.count) order ids)")
        let response = try await send(.orders, call)
        let answer = try Self.decoding(call, response) { try JSONReader.read(response.body, OrdersPage.init(json:)) }
        let byID = Dictionary((answer.orders ?? []).compactMap { order in order.orderId.map { ($0, order) } }) { first, _ in first }
        return try ids.map { id in
            guard let order = byID[id] else {
                throw GooglePlayAPIError(.invalidResponse, "\(call) answered no order \(id)")
            }
            return order
        }
    }

    /// Google's most ids in one `orders.batchGet`.
    public static let maxBatchIDs = 1000
    /// The longest `orders.batchGet` query sent. The ids travel in the URL, and front ends refuse long ones
    /// (414) well before 1,000 ids of about 30 characters: 8 KB, what HTTP servers commonly accept, holds about 200.
    public static let maxBatchQueryBytes = 8 * 1024

    /// The bytes `id` adds to an `orders.batchGet` query, its `&` included.
    public static func batchQueryBytes(_ id: String) -> Int { PercentEncoding.form([("orderIds", id)]).utf8.count + 1 }

    /// Whether `count` ids adding `bytes` (`batchQueryBytes`) fit in one `orders.batchGet`.
    public static func batchFits(count: Int, bytes: Int) -> Bool { count <= maxBatchIDs && bytes - 1 <= maxBatchQueryBytes }

    /// `ids` split, in order, into lists `orders(ids:)` takes.
    public static func batches(of ids: [String]) -> [[String]] {
        var batches: [[String]] = []
        var current: [String] = []
        var bytes = 0
        for id in ids {
            let cost = batchQueryBytes(id)
            if !current.isEmpty && !batchFits(count: current.count + 1, bytes: bytes + cost) {
                batches.append(current)
                (current, bytes) = ([], 0)
            }
            current.append(id)
            bytes += cost
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }

    /// `BatchGetOrdersResponse`, as Google documents it.
    private struct OrdersPage: JSONReadable {
        var orders: [GooglePlayOrder]?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "orders": orders = try reader.readList(GooglePlayOrder.self)
                default: try reader.skipValue()
                }
            }
        }
    }

    /// `purchases.subscriptions.acknowledge`: tells Google the purchase `token` was granted, which stops the
    /// automatic refund of purchases left unacknowledged for three days. `subscriptionID` is the line item's
    /// product id (the path still names it). Throws `GooglePlayAPIError` or `CancellationError`.
    public func acknowledge(subscriptionID: String, token: String, developerPayload: String? = nil) async throws {
        let call = Call("POST", "/purchases/subscriptions/\(try Self.pathSegment(subscriptionID, "subscription id"))"
                        + "/tokens/\(try Self.pathSegment(token, "purchase token")):acknowledge")
        var body: [String: String] = [:]
        body["developerPayload"] = developerPayload
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json: Data
        do {
            json = try encoder.encode(body)
        } catch {
            throw GooglePlayAPIError(.invalidRequest, "\(call): the acknowledge request does not encode: \(error)")
        }
        _ = try await send(.subscriptionUpdates, call, body: json)
    }

    /// One page of `purchases.voidedpurchases.list`, subscriptions included (`type=1`), oldest first. Pass
    /// `startTime` (Google refuses more than 30 days back) for the first page and the previous page's
    /// `nextPageToken` as `token` for the others. Throws `GooglePlayAPIError` or `CancellationError`.
    public func voidedPurchases(startTime: Date? = nil, endTime: Date? = nil, token: String? = nil,
                                maxResults: Int = 1000) async throws -> VoidedPurchasesPage {
        guard (1...1000).contains(maxResults) else {
            throw GooglePlayAPIError(.invalidRequest, "maxResults \(maxResults) is outside Google's 1...1000")
        }
        var query = [("type", "1"), ("maxResults", String(maxResults))]
        if let startTime { query.append(("startTime", String(Self.milliseconds(startTime)))) }
        if let endTime { query.append(("endTime", String(Self.milliseconds(endTime)))) }
        if let token {
            guard (1...4096).contains(token.utf8.count) else {
                throw GooglePlayAPIError(.invalidRequest, "page token of \(token.utf8.count) bytes is not 1 to 4096 bytes")
            }
            query.append(("token", token))
        }
        let call = Call("GET", "/purchases/voidedpurchases?" + PercentEncoding.form(query))
        let response = try await send(.voidedPurchases, call)
        let page = try Self.decoding(call, response) { try JSONReader.read(response.body, VoidedPage.init(json:)) }
        let next = page.tokenPagination?.nextPageToken.flatMap { $0.isEmpty ? nil : $0 }
        if let next, next == token {
            throw GooglePlayAPIError(.invalidResponse, "\(call): the next page token repeats the one asked for")
        }
        return VoidedPurchasesPage(voidedPurchases: page.voidedPurchases ?? [], nextPageToken: next)
    }

    // MARK: - Requests

    /// One request's method and target below the application's URL, which also name it in error messages.
    private struct Call: CustomStringConvertible {
        let method: String
        let target: String
        /// What logs and dead letters name instead of `target`, when that is long (a batch's ids).
        let summary: String?

        init(_ method: String, _ target: String, summary: String? = nil) {
            self.method = method
            self.target = target
            self.summary = summary
        }

        var description: String { "\(method) \(summary ?? target)" }
    }

    /// Waits for a pacing slot, sends `call` with the access token and returns a 2xx response; anything else is
    /// thrown classified. A 401 discards the token and the call is repeated once with a fresh one: Google may
    /// revoke a token before the `expires_in` it announced.
    private func send(_ family: GooglePlayEndpointFamily, _ call: Call, body: Data? = nil) async throws -> HTTPClientResponse {
        var refreshed = false
        while true {
            try await limiter.acquire(family)
            let token = try await tokens.token()
            var headers: [(name: String, value: String)] = [("Authorization", "Bearer \(token)"), ("Accept", "application/json")]
            if body != nil { headers.append(("Content-Type", "application/json")) }
            let request = HTTPClientRequest(method: call.method, url: applicationURL + call.target, headers: headers,
                                            body: body, timeout: configuration.requestTimeout)
            let started = ContinuousClock.now
            let response: HTTPClientResponse
            do {
                response = try await http.send(request)
            } catch let error as HTTPClientError {
                observe?(GooglePlayAPICall(family: family, status: nil, duration: ContinuousClock.now - started))
                throw GooglePlayAPIError(transport: error, call: "\(call)")
            }
            observe?(GooglePlayAPICall(family: family, status: response.status, duration: ContinuousClock.now - started))
            if (200...299).contains(response.status) { return response }
            if response.status == 401 {
                await tokens.discard(token)
                if !refreshed {
                    refreshed = true
                    continue
                }
            }
            throw GooglePlayAPIError.classify(response, call: "\(call)", now: now())
        }
    }

    /// An identifier as one path segment. Google's tokens, order ids and product ids use letters, digits, `.`,
    /// `-` and `_`; anything that could change the path (`/`, `?`, `%`, `:`, a dot segment) is refused before it
    /// reaches a URL.
    private static func pathSegment(_ value: String, _ what: String) throws(GooglePlayAPIError) -> String {
        guard (1...4096).contains(value.utf8.count), value.utf8.allSatisfy({ segmentBytes.contains($0) }),
              value.utf8.contains(where: { $0 != UInt8(ascii: ".") }) else {
            throw GooglePlayAPIError(.invalidRequest, "\(what) \(value.prefix(70).debugDescription) is not 1 to 4096 "
                                     + "letters, digits, '.', '-' or '_'")
        }
        return value
    }

    private static let segmentBytes = Set((PercentEncoding.alphanumerics + "-._").utf8)

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    // MARK: - Answers

    /// The answer `decode` reads from the body; a `JSONReaderError` names the field at fault and what was wrong.
    private static func decoding<T>(_ call: Call, _ response: HTTPClientResponse, _ decode: () throws -> T)
        throws(GooglePlayAPIError) -> T
    {
        do {
            return try decode()
        } catch {
            throw GooglePlayAPIError(.invalidResponse, "\(call): the body (\(response.body.count) bytes) is not the documented "
                                     + "JSON: \(error)", httpStatus: response.status)
        }
    }

    /// `VoidedPurchasesListResponse`, as Google documents it (only the fields the client reads).
    private struct VoidedPage: JSONReadable {
        struct TokenPagination: JSONReadable {
            var nextPageToken: String?

            init(json reader: inout JSONReader) throws {
                try reader.readObject { reader, key in
                    switch key {
                    case "nextPageToken": nextPageToken = try reader.readString()
                    default: try reader.skipValue()
                    }
                }
            }
        }

        var tokenPagination: TokenPagination?
        var voidedPurchases: [VoidedPurchase]?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "tokenPagination": tokenPagination = try reader.readOptional(TokenPagination.init(json:))
                case "voidedPurchases": voidedPurchases = try reader.readList(VoidedPurchase.self)
                default: try reader.skipValue()
                }
            }
        }
    }
}

/// One request the client sent, as its observer sees it.
public struct GooglePlayAPICall: Sendable {
    public let family: GooglePlayEndpointFamily
    /// The HTTP status, or `nil` when no answer arrived.
    public let status: Int?
    public let duration: Duration
}
