import Foundation
import HTTP
import Logging

/// The simulated Play Store behind the HTTP server and the public facade: state, OAuth, push keys and
/// delivery, faults and counters. Scenario commands run through `run`, so the Swift API and the HTTP control
/// API change state and notify in exactly the same way.
final class PlayCore: Sendable {
    let state: Locked<PlayState>
    let keys: PushKeyRing
    let pusher: PubSubPusher
    let faults = PlayFaultInjector()
    let counters = PlayRequestCounters()
    let accessTokens = AccessTokens()
    let tokenEndpoint: TokenEndpoint
    /// Known once the server is bound (its port is in it).
    let tokenURI = Locked("")
    let accessTokenLifetime: Duration
    let jwksMaxAge: Duration
    /// Why recent requests were refused (401 at the API, 400 at the token endpoint), newest last (at most 20).
    let authenticationFailures = Locked<[String]>([])
    let logger = Logger(component: "simulator")

    init(apps: [String: SimulatedPlayApp], configuration: PlaySimulatorConfiguration, keys: PushKeyRing, pusher: PubSubPusher) {
        state = Locked(PlayState(apps: apps, start: configuration.clockStart))
        self.keys = keys
        self.pusher = pusher
        tokenEndpoint = TokenEndpoint(account: configuration.serviceAccount)
        accessTokenLifetime = configuration.accessTokenLifetime
        jwksMaxAge = configuration.jwksMaxAge
    }

    /// Applies one scenario command and, unless `silent`, publishes the notifications it causes, waiting for
    /// each one's first delivery.
    func run(silent: Bool, _ change: (inout PlayState) throws -> PlayChange) async throws -> PlayScenarioResult {
        let (applied, subscriptionState, now) = try state.withLock { state in
            let applied = try change(&state)
            return (applied, state.subscriptions[applied.purchaseToken]?.state, state.now)
        }
        var pushes: [PlayPushRecord] = []
        if !silent {
            for notification in applied.notifications {
                pushes.append(try await pusher.publish(notification, publishTime: now, plan: faults.takePushPlan()))
            }
        }
        return PlayScenarioResult(purchaseToken: applied.purchaseToken, orderId: applied.orderId,
                                  subscriptionState: subscriptionState, pushes: pushes)
    }

    /// Publishes a `testNotification` for `packageName`, as Play Console's "Send test notification" does.
    func sendTestNotification(packageName: String?) async throws -> PlayScenarioResult {
        let (app, now) = try state.withLock { state in (try state.app(packageName), state.now) }
        let notification = PlayNotification(packageName: app.packageName, eventTime: now, content: .test)
        let push = try await pusher.publish(notification, publishTime: now, plan: faults.takePushPlan())
        return PlayScenarioResult(purchaseToken: nil, orderId: nil, subscriptionState: nil, pushes: [push])
    }

    func noteAuthenticationFailure(_ reason: String) {
        authenticationFailures.withLock { failures in
            failures.append(reason)
            if failures.count > 20 { failures.removeFirst() }
        }
    }
}
