import HTTP

/// The App Store Server API endpoints the simulator serves, named as method and path template.
public enum SimulatorEndpoint: String, Sendable, CaseIterable, Codable {
    case subscriptionStatuses = "GET /inApps/v1/subscriptions/{transactionId}"
    case transactionHistory = "GET /inApps/v2/history/{transactionId}"
    case consumption = "PUT /inApps/v2/transactions/consumption/{transactionId}"
    case notificationHistory = "POST /inApps/v1/notifications/history"
}

/// Requests received per endpoint, whatever they were answered — what tests and benchmarks compare with the
/// calls they expect StoreSync to make.
final class RequestCounters: Sendable {
    private let counts = Locked<[SimulatorEndpoint: Int]>([:])

    func increment(_ endpoint: SimulatorEndpoint) {
        counts.withLock { $0[endpoint, default: 0] += 1 }
    }

    var snapshot: [SimulatorEndpoint: Int] { counts.withLock { $0 } }

    func reset() {
        counts.withLock { $0 = [:] }
    }
}
