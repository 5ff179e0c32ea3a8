import Foundation
import Simulator

/// A small seeded generator (SplitMix64), so a chaos run's plan and faults repeat for a given `--seed`.
struct ChaosRandom: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// One scripted step of a store's load: what happens to which of its purchases.
enum ChaosAction: Sendable {
    case purchase(Int)
    case renew(Int)
    case cancel(Int)
    case refund(Int)

    var index: Int {
        switch self {
        case .purchase(let i), .renew(let i), .cancel(let i), .refund(let i): i
        }
    }

    /// The scripted load of one store: every purchase, then two rounds of renewals (half the purchases, then half
    /// of those), cancellations (a fifth) and refunds (a tenth, of the current period, revoking access). Rounds
    /// keep the simulators' shared clocks within two periods of now: every renewal moves a clock to its period's end.
    static func plan(purchases: Int, random: inout ChaosRandom) -> [ChaosAction] {
        var actions = (0..<purchases).map { ChaosAction.purchase($0) }
        let first = (0..<purchases).filter { _ in random.unit() < 0.5 }
        actions += first.map { .renew($0) }
        actions += first.filter { _ in random.unit() < 0.5 }.map { .renew($0) }
        actions += (0..<purchases).filter { _ in random.unit() < 0.2 }.map { .cancel($0) }
        actions += (0..<purchases).filter { _ in random.unit() < 0.1 }.map { .refund($0) }
        return actions
    }
}

/// What one store's load did, for the report.
struct ChaosLoadTally: Sendable {
    var actions = 0
    var notifications = 0
    var rateLimited = 0
    var failed = 0
    var latency = 0
    /// Notifications the simulator was told to lose (never of a first purchase: see `ChaosStores`).
    var dropped = 0
    /// App Store notifications ingest refused (a 503 while PostgreSQL restarted) and the driver sent again, as
    /// Apple retries; Google's Pub/Sub redelivers by itself.
    var redelivered = 0
    /// App Store notifications still refused after every redelivery.
    var undelivered = 0
    var scenarioErrors: [String] = []

    mutating func merge(_ other: ChaosLoadTally) {
        actions += other.actions
        notifications += other.notifications
        rateLimited += other.rateLimited
        failed += other.failed
        latency += other.latency
        dropped += other.dropped
        redelivered += other.redelivered
        undelivered += other.undelivered
        scenarioErrors += other.scenarioErrors
    }
}

/// The faults one store's load may inject before an action, in turn: 429, 500, latency, a lost notification.
enum ChaosFault: CaseIterable {
    case rateLimit, failure, latency, drop
}

/// Runs one store's scripted load against its simulator, paced evenly over `duration`, one action at a time (so a
/// lost-notification fault set before an action loses exactly that action's notification).
struct ChaosLoad: Sendable {
    let store: ChaosStore
    let purchases: Int
    let duration: Duration
    let faultRate: Double
    let seed: UInt64
    let tokens: [UUID]
    let progress: @Sendable (Int) -> Void

    /// Returns the tally and the lineages bought (index → lineage).
    func run() async -> (ChaosLoadTally, [String?]) {
        var random = ChaosRandom(seed: seed)
        let actions = ChaosAction.plan(purchases: purchases, random: &random)
        var tally = ChaosLoadTally()
        var lineages = [String?](repeating: nil, count: purchases)
        let clock = ContinuousClock()
        let start = clock.now
        let spacing = actions.isEmpty ? Duration.zero : duration / actions.count
        var turn = 0
        for (k, action) in actions.enumerated() {
            try? await clock.sleep(until: start + spacing * k)
            progress(1)
            if case .purchase = action {} else if lineages[action.index] == nil { continue }  // its purchase failed
            if random.unit() < faultRate {
                var fault = ChaosFault.allCases[turn % ChaosFault.allCases.count]
                turn += 1
                if case .purchase = action, fault == .drop { fault = .failure }
                inject(fault, &tally)
            }
            tally.actions += 1
            do {
                switch action {
                case .purchase(let i):
                    lineages[i] = try await store.purchase(token: tokens[i], &tally)
                case .renew(let i): try await store.renew(lineages[i]!, &tally)
                case .cancel(let i): try await store.cancel(lineages[i]!, &tally)
                case .refund(let i): try await store.refund(lineages[i]!, &tally)
                }
            } catch {
                tally.scenarioErrors.append("\(store.name) \(action): \(error)")
            }
        }
        return (tally, lineages)
    }

    private func inject(_ fault: ChaosFault, _ tally: inout ChaosLoadTally) {
        do {
            switch fault {
            case .rateLimit: try store.addRateLimited(); tally.rateLimited += 1
            case .failure: try store.addFailure(); tally.failed += 1
            case .latency: try store.latencySpike(); tally.latency += 1
            case .drop: try store.dropNext(); tally.dropped += 1
            }
        } catch {
            tally.scenarioErrors.append("\(store.name) fault \(fault): \(error)")
        }
    }
}

/// One store's simulator as the chaos load drives it.
enum ChaosStore: Sendable {
    case apple(ApplePipelineBenchStore)
    case google(GooglePipelineBenchStore)

    var name: String {
        switch self {
        case .apple: "apple"
        case .google: "google"
        }
    }

    static let latencySpike = Duration.milliseconds(300)
    static let latencySpikeLength = Duration.seconds(1)

    func addRateLimited() throws {
        switch self {
        case .apple(let s): try s.simulator.rateLimitNextRequests(s.simulator.faults.rateLimitedRequests + 1)
        case .google(let s): try s.play.rateLimitNextRequests(s.play.faults.rateLimitedRequests + 1)
        }
    }

    func addFailure() throws {
        switch self {
        case .apple(let s): try s.simulator.failNextRequests(s.simulator.faults.failedRequests + 1)
        case .google(let s): try s.play.failNextRequests(s.play.faults.failedRequests + 1)
        }
    }

    /// Every API answer is delayed for a second.
    func latencySpike() throws {
        try setLatency(Self.latencySpike)
        Task {
            try? await Task.sleep(for: Self.latencySpikeLength)
            try? setLatency(.zero)
        }
    }

    func setLatency(_ latency: Duration) throws {
        switch self {
        case .apple(let s): try s.simulator.setLatency(latency)
        case .google(let s): try s.play.setLatency(latency)
        }
    }

    func dropNext() throws {
        switch self {
        case .apple(let s): try s.simulator.dropNextNotifications(1)
        case .google(let s): try s.play.dropNextPushes(1)
        }
    }

    func clearFaults() throws {
        switch self {
        case .apple(let s): try s.simulator.setFaults(FaultSettings())
        case .google(let s): try s.play.setFaults(PlayFaultSettings())
        }
    }

    static let appleProduct = (id: PipelineBenchmark.productID, price: Int64(9_990), currency: "USD")

    func purchase(token: UUID, _ tally: inout ChaosLoadTally) async throws -> String {
        switch self {
        case .apple(let s):
            let bought = try await s.simulator.subscribe(productId: Self.appleProduct.id, price: Self.appleProduct.price,
                                                         currency: Self.appleProduct.currency, appAccountToken: token)
            try await Self.delivered(bought.notification, s.simulator, &tally)
            return bought.originalTransactionId
        case .google(let s):
            let bought = try await s.play.purchase(productId: PipelineBenchmark.productID, basePlanId: GooglePipelineBenchStore.basePlan,
                                                   price: 999, currency: "USD", obfuscatedAccountId: token.uuidString)
            tally.notifications += bought.pushes.count
            guard let token = bought.purchaseToken else { throw BenchError("the Play simulator's purchase named no token") }
            return token
        }
    }

    func renew(_ lineage: String, _ tally: inout ChaosLoadTally) async throws {
        switch self {
        case .apple(let s): try await Self.delivered(try await s.simulator.renew(lineage).notification, s.simulator, &tally)
        case .google(let s): tally.notifications += try await s.play.renew(lineage).pushes.count
        }
    }

    func cancel(_ lineage: String, _ tally: inout ChaosLoadTally) async throws {
        switch self {
        case .apple(let s): try await Self.delivered(try await s.simulator.cancel(lineage).notification, s.simulator, &tally)
        case .google(let s): tally.notifications += try await s.play.cancel(lineage).pushes.count
        }
    }

    func refund(_ lineage: String, _ tally: inout ChaosLoadTally) async throws {
        switch self {
        case .apple(let s): try await Self.delivered(try await s.simulator.refund(lineage).notification, s.simulator, &tally)
        case .google(let s): tally.notifications += try await s.play.refund(lineage).pushes.count
        }
    }

    /// Apple retries a notification its endpoint refused (1, 12, 24, 48, 72 hours later); the simulator does not,
    /// so the load does, within seconds: what ingest refused while PostgreSQL was down is sent again until it is
    /// stored (at most 10 times over about 40 s). A notification the load itself told the simulator to lose stays
    /// lost.
    private static func delivered(_ notification: NotificationRecord?, _ simulator: AppStoreSimulator,
                                  _ tally: inout ChaosLoadTally) async throws {
        guard let notification else { throw BenchError("the App Store simulator sent no notification") }
        tally.notifications += 1
        var delivery = notification.delivery
        var wait = Duration.milliseconds(250)
        for _ in 0..<10 {
            if delivery.outcome == .dropped || (200...299).contains(delivery.httpStatus ?? 0) { return }
            try await Task.sleep(for: wait)
            wait = min(wait * 2, .seconds(5))
            tally.redelivered += 1
            guard let again = try await simulator.resendLastNotification(times: 1).first else { break }
            delivery = again.delivery
        }
        if delivery.outcome != .dropped && !(200...299).contains(delivery.httpStatus ?? 0) { tally.undelivered += 1 }
    }
}
