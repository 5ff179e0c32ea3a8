import Foundation
import HTTP

/// The App Store Server API routes. Every request is counted, delayed by the configured latency, then
/// authenticated (401 otherwise), then subjected to injected 429 and 500 faults, then answered.
extension SimulatorCore {
    static let statusPrefix = "/inApps/v1/subscriptions/"
    static let historyPrefix = "/inApps/v2/history/"
    static let consumptionPrefix = "/inApps/v2/transactions/consumption/"
    static let notificationHistoryPath = "/inApps/v1/notifications/history"

    func installAPI(into router: inout HTTPRouter) {
        router.route("GET", prefix: Self.statusPrefix) { request in
            await self.serve(.subscriptionStatuses, request) { try self.statuses(request, app: $0) }
        }
        router.route("GET", prefix: Self.historyPrefix) { request in
            await self.serve(.transactionHistory, request) { try self.history(request, app: $0) }
        }
        router.route("PUT", prefix: Self.consumptionPrefix) { request in
            await self.serve(.consumption, request) { try self.consumption(request, app: $0) }
        }
        router.route("POST", Self.notificationHistoryPath) { request in
            await self.serve(.notificationHistory, request) { try self.notificationHistory(request, app: $0) }
        }
    }

    private func serve(_ endpoint: SimulatorEndpoint, _ request: HTTPRequest,
                       _ answer: (SimulatedApp) throws -> HTTPResponse) async -> HTTPResponse {
        counters.increment(endpoint)
        let latency = faults.latency
        if latency > .zero { try? await Task.sleep(for: latency) }
        let app: SimulatedApp
        switch authenticator.authenticate(request.header("authorization"), now: Date()) {
        case .failure(let failure):
            authenticationFailures.withLock { failures in
                failures.append(failure.description)
                if failures.count > 20 { failures.removeFirst() }
            }
            logger.warning("server API request refused", ["endpoint": .string(endpoint.rawValue),
                                                          "reason": .string(failure.description)])
            return .text(401, "Unauthenticated\n")
        case .success(let found): app = found
        }
        if let (milliseconds, format) = faults.takeRateLimit() {
            var response = AppleAPIError.rateLimitExceeded.response
            response.headers.append(("Retry-After", Self.retryAfter(milliseconds, format)))
            return response
        }
        if faults.takeFailure() { return AppleAPIError.generalInternal.response }
        do {
            return try answer(app)
        } catch let error as AppleAPIError {
            return error.response
        } catch let error as PathNotFound {
            return .text(404, "no endpoint at \(error.path)\n")
        } catch {
            logger.error("server API request failed", ["endpoint": .string(endpoint.rawValue), "error": .string("\(error)")])
            return AppleAPIError.generalInternal.response
        }
    }

    private static func retryAfter(_ milliseconds: Int64, _ format: RetryAfterFormat) -> String {
        switch format {
        case .unixTimeMilliseconds: String(Date().milliseconds + milliseconds)
        case .seconds: String((milliseconds + 999) / 1000)
        }
    }

    /// The `{transactionId}` path segment after `prefix`: digits only, as Apple's ids are.
    func transactionID(in request: HTTPRequest, after prefix: String) throws -> String {
        let id = String(request.path.dropFirst(prefix.count))
        guard !id.contains("/") else { throw PathNotFound(path: request.path) }
        guard (1...20).contains(id.utf8.count), id.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw AppleAPIError.invalidTransactionId
        }
        return id
    }

    /// The lineage `transactionId` belongs to, if it is one of `app`'s.
    func lineage(of transactionId: String, app: SimulatedApp, in state: StoreState) throws -> SimulatedSubscription {
        guard let subscription = state.lineage(containing: transactionId), subscription.bundleId == app.bundleID else {
            throw AppleAPIError.transactionIdNotFound
        }
        return subscription
    }

    /// Apple's response envelope fields for `app`.
    func envelope(_ app: SimulatedApp) -> [String: Any] {
        var body: [String: Any] = ["environment": app.environment.rawValue, "bundleId": app.bundleID]
        body["appAppleId"] = app.appAppleID
        return body
    }
}

/// A path under an API prefix with more segments than the endpoint has.
struct PathNotFound: Error {
    let path: String
}
