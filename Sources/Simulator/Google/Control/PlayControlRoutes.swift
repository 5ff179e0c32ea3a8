import Crypto
import Foundation
import HTTP
import Logging

/// The HTTP control API under `/simulator/google/`, so the CLI and other processes can drive a running Play
/// simulator:
///
/// - `POST /simulator/google/scenario/{action}` with a `PlayScenarioRequest` → the `PlayScenarioResult`
/// - `POST /simulator/google/pushes/resend` `{"times": N}` → the message's `PlayPushRecord`
/// - `GET /simulator/google/pushes` → every message published and its deliveries
/// - `GET /simulator/google/clock`, `POST /simulator/google/clock` `{"advanceMilliseconds": N}` or `{"to": MS}`,
///   bounded as the App Store simulator's (`ClockBounds`)
/// - `GET /simulator/google/faults`, `POST /simulator/google/faults` with any `PlayFaultSettings` fields
/// - `GET /simulator/google/requests` → requests per endpoint
/// - `GET /simulator/google/acknowledgements` → the acknowledgements received
/// - `GET /simulator/google/subscriptions/{token}` → the `SubscriptionPurchaseV2` and its orders, unauthenticated
/// - `POST /simulator/google/keys/rotate` `{"keepPrevious": true}` → the published `kid`s
/// - `POST /simulator/google/access-tokens/expire` → every access token issued so far stops working
///
/// It is unauthenticated, like any local test double: listen on a loopback address.
extension PlayCore {
    static let controlPrefix = "/simulator/google/"
    static let scenarioPrefix = "/simulator/google/scenario/"
    static let subscriptionPrefix = "/simulator/google/subscriptions/"

    func installControl(into router: inout HTTPRouter) {
        router.route("POST", prefix: Self.scenarioPrefix) { request in
            await self.control { try await self.scenario(request) }
        }
        router.route("POST", Self.controlPrefix + "pushes/resend") { request in
            await self.control {
                struct Body: Decodable { let times: Int? }
                return try ControlAnswer.encode(try await self.pusher.resendLast(times: try ControlAnswer.decode(Body.self, request.body).times ?? 1))
            }
        }
        router.route("GET", Self.controlPrefix + "pushes") { _ in await self.control { try ControlAnswer.encode(self.pusher.records) } }
        router.route("GET", Self.controlPrefix + "clock") { _ in await self.control { self.clock() } }
        router.route("POST", Self.controlPrefix + "clock") { request in
            await self.control {
                struct Body: Decodable {
                    let advanceMilliseconds: Int64?
                    let to: Int64?
                }
                let body = try ControlAnswer.decode(Body.self, request.body)
                let target = try body.to.map(ClockBounds.target)
                try self.state.withLock { state in
                    if let step = body.advanceMilliseconds { try state.advanceClock(by: .milliseconds(step)) }
                    if let target { state.advanceClock(to: target) }
                }
                return self.clock()
            }
        }
        router.route("GET", Self.controlPrefix + "faults") { _ in await self.control { try ControlAnswer.encode(self.faults.current) } }
        router.route("POST", Self.controlPrefix + "faults") { request in
            await self.control {
                let update = try ControlAnswer.decode(PlayFaultUpdate.self, request.body)
                try self.faults.update { update.apply(to: &$0) }
                return try ControlAnswer.encode(self.faults.current)
            }
        }
        router.route("GET", Self.controlPrefix + "requests") { _ in
            await self.control {
                let counts = self.counters.snapshot
                return try ControlAnswer.encode(Dictionary(uniqueKeysWithValues: PlayEndpoint.allCases.map { ($0.rawValue, counts[$0] ?? 0) }))
            }
        }
        router.route("GET", Self.controlPrefix + "acknowledgements") { _ in
            await self.control { try ControlAnswer.encode(self.state.withLock { $0.acknowledgements }) }
        }
        router.route("GET", prefix: Self.subscriptionPrefix) { request in
            await self.control { try self.describe(String(request.path.dropFirst(Self.subscriptionPrefix.count))) }
        }
        router.route("POST", Self.controlPrefix + "keys/rotate") { request in
            await self.control {
                struct Body: Decodable { let keepPrevious: Bool? }
                let body = try ControlAnswer.decode(Body.self, request.body)
                _ = try self.keys.rotate(to: try PrivateKey.generate(.rsa(bits: 2048)), keepPrevious: body.keepPrevious ?? true)
                return try ControlAnswer.encode(["keyIds": self.keys.publishedKeyIDs])
            }
        }
        router.route("POST", Self.controlPrefix + "access-tokens/expire") { _ in
            await self.control {
                self.accessTokens.expireAll()
                return .json(200, "{\"expired\":true}")
            }
        }
    }

    private func scenario(_ request: HTTPRequest) async throws -> HTTPResponse {
        let name = String(request.path.dropFirst(Self.scenarioPrefix.count))
        guard let action = PlayScenarioAction(rawValue: name) else {
            throw SimulatorError(.notFound, "no Google scenario action \(name); actions: "
                                 + PlayScenarioAction.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let body = try ControlAnswer.decode(PlayScenarioRequest.self, request.body)
        if action == .testNotification {
            return try ControlAnswer.encode(try await sendTestNotification(packageName: body.packageName))
        }
        return try ControlAnswer.encode(try await run(silent: body.silent ?? false, try action.change(body)))
    }

    private func clock() -> HTTPResponse {
        let now = state.withLock { $0.now }
        return .json(200, "{\"now\":\(now),\"time\":\(JSON.quoted(PlayJSON.time(now)))}")
    }

    /// A token as `subscriptionsv2.get` would report it (even after Google stopped answering), with its orders.
    private func describe(_ token: String) throws -> HTTPResponse {
        let body: [String: Any] = try state.withLock { state in
            let subscription = try state.subscription(token)
            return ["subscription": subscription.resource, "noLongerAvailable": subscription.noLongerAvailable,
                    "orders": subscription.orderIds.compactMap { state.orders[$0]?.resource }]
        }
        return .json(200, try JSONBody.string(body))
    }

    private func control(_ handle: () async throws -> HTTPResponse) async -> HTTPResponse {
        await ControlAnswer.run(logger: logger, handle)
    }
}

/// A partial `PlayFaultSettings`: the fields given replace the current ones, the others stay.
struct PlayFaultUpdate: Decodable {
    var rateLimitedRequests: Int?
    var retryAfterSeconds: Int64?
    var failedRequests: Int?
    var permissionDeniedRequests: Int?
    var latencyMilliseconds: Int64?
    var droppedPushes: Int?
    var duplicatedPushCopies: Int?
    var badPushTokens: Int?
    var badPushToken: PushTokenFault?

    func apply(to settings: inout PlayFaultSettings) {
        if let rateLimitedRequests { settings.rateLimitedRequests = rateLimitedRequests }
        if let retryAfterSeconds { settings.retryAfterSeconds = retryAfterSeconds }
        if let failedRequests { settings.failedRequests = failedRequests }
        if let permissionDeniedRequests { settings.permissionDeniedRequests = permissionDeniedRequests }
        if let latencyMilliseconds { settings.latencyMilliseconds = latencyMilliseconds }
        if let droppedPushes { settings.droppedPushes = droppedPushes }
        if let duplicatedPushCopies { settings.duplicatedPushCopies = duplicatedPushCopies }
        if let badPushTokens { settings.badPushTokens = badPushTokens }
        if let badPushToken { settings.badPushToken = badPushToken }
    }
}
