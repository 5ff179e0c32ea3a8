import Foundation
import HTTP
import Logging
import StoreModel

/// The HTTP control API under `/simulator/`, so the CLI and other processes can drive a running simulator:
///
/// - `POST /simulator/scenario/{action}` with a `ScenarioRequest` → the `ScenarioResult`
/// - `POST /simulator/notifications/resend` `{"times": N}` → the delivery records
/// - `GET /simulator/clock`, `POST /simulator/clock` `{"advanceMilliseconds": N}` (at most 100 years) or `{"to": MS}`
///   (2000…2200; an earlier time than now leaves the clock) → `{"now": MS}`; no request moves it past 2200
/// - `GET /simulator/faults`, `POST /simulator/faults` with any `FaultSettings` fields → the settings
/// - `GET /simulator/requests` → requests per endpoint
/// - `GET /simulator/consumption` → the consumption information received
/// - `GET /simulator/subscriptions/{originalTransactionId}` → status, renewal info and transactions, unsigned
/// - `GET /simulator/root.pem` → the root certificate
///
/// It is unauthenticated, like any local test double: listen on a loopback address.
extension SimulatorCore {
    static let scenarioPrefix = "/simulator/scenario/"
    static let subscriptionPrefix = "/simulator/subscriptions/"

    func installControl(into router: inout HTTPRouter) {
        router.route("POST", prefix: Self.scenarioPrefix) { request in
            await self.control { try await self.scenario(request) }
        }
        router.route("POST", "/simulator/notifications/resend") { request in
            await self.control {
                struct Body: Decodable { let times: Int? }
                let body = try ControlAnswer.decode(Body.self, request.body)
                return try ControlAnswer.encode(try await self.resendLast(times: body.times ?? 1))
            }
        }
        router.route("GET", "/simulator/clock") { _ in await self.control { self.clock() } }
        router.route("POST", "/simulator/clock") { request in
            await self.control {
                struct Body: Decodable {
                    let advanceMilliseconds: Int64?
                    let to: Int64?
                }
                let body = try ControlAnswer.decode(Body.self, request.body)
                let target = try body.to.map { Date(milliseconds: try ClockBounds.target($0)) }
                try self.state.withLock { state in
                    if let step = body.advanceMilliseconds { try state.advanceClock(by: .milliseconds(step)) }
                    if let target { state.advanceClock(to: target) }
                }
                return self.clock()
            }
        }
        router.route("GET", "/simulator/faults") { _ in await self.control { try ControlAnswer.encode(self.faults.current) } }
        router.route("POST", "/simulator/faults") { request in
            await self.control {
                let update = try ControlAnswer.decode(FaultUpdate.self, request.body)
                try self.faults.update { update.apply(to: &$0) }
                return try ControlAnswer.encode(self.faults.current)
            }
        }
        router.route("GET", "/simulator/requests") { _ in
            await self.control {
                let counts = self.counters.snapshot
                return try ControlAnswer.encode(Dictionary(uniqueKeysWithValues: SimulatorEndpoint.allCases.map {
                    ($0.rawValue, counts[$0] ?? 0)
                }))
            }
        }
        router.route("GET", "/simulator/consumption") { _ in
            await self.control { try ControlAnswer.encode(self.state.withLock { $0.consumptionRequests }) }
        }
        router.route("GET", prefix: Self.subscriptionPrefix) { request in
            await self.control { try self.describe(String(request.path.dropFirst(Self.subscriptionPrefix.count))) }
        }
        router.route("GET", "/simulator/root.pem") { _ in
            HTTPResponse(status: 200, headers: [("content-type", "application/x-pem-file")],
                         body: Data(self.signer.pki.root.pem.utf8))
        }
    }

    private func scenario(_ request: HTTPRequest) async throws -> HTTPResponse {
        let name = String(request.path.dropFirst(Self.scenarioPrefix.count))
        guard let action = ScenarioAction(rawValue: name) else {
            throw SimulatorError(.notFound, "no scenario action \(name); actions: "
                                 + ScenarioAction.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let body = try ControlAnswer.decode(ScenarioRequest.self, request.body)
        return try ControlAnswer.encode(try await run(silent: body.silent ?? false, try action.change(body)))
    }

    private func clock() -> HTTPResponse {
        .json(200, "{\"now\":\(state.withLock { $0.nowMilliseconds })}")
    }

    /// A subscription as the simulator holds it: the same fields as the signed payloads, unsigned.
    private func describe(_ originalTransactionId: String) throws -> HTTPResponse {
        let body: [String: Any] = try state.withLock { state in
            let subscription = try state.subscription(originalTransactionId)
            return [
                "originalTransactionId": subscription.originalTransactionId, "status": subscription.status.rawValue,
                "renewalInfo": subscription.renewalInfo.payload(signedDate: state.now),
                "transactions": subscription.transactionIds.compactMap { state.transactions[$0]?.payload(signedDate: state.now) },
            ]
        }
        return .json(200, try JSONBody.string(body))
    }

    private func control(_ handle: () async throws -> HTTPResponse) async -> HTTPResponse {
        await ControlAnswer.run(logger: logger, handle)
    }
}

/// A partial `FaultSettings`: the fields given replace the current ones, the others stay.
struct FaultUpdate: Decodable {
    var rateLimitedRequests: Int?
    var retryAfterMilliseconds: Int64?
    var retryAfterFormat: RetryAfterFormat?
    var failedRequests: Int?
    var latencyMilliseconds: Int64?
    var droppedNotifications: Int?

    func apply(to settings: inout FaultSettings) {
        if let rateLimitedRequests { settings.rateLimitedRequests = rateLimitedRequests }
        if let retryAfterMilliseconds { settings.retryAfterMilliseconds = retryAfterMilliseconds }
        if let retryAfterFormat { settings.retryAfterFormat = retryAfterFormat }
        if let failedRequests { settings.failedRequests = failedRequests }
        if let latencyMilliseconds { settings.latencyMilliseconds = latencyMilliseconds }
        if let droppedNotifications { settings.droppedNotifications = droppedNotifications }
    }
}
