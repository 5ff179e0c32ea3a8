import Foundation

/// The load of `bench pipeline`, run in the stores' process (`PipelineStoreProcess`): the scenario calls that
/// make the simulator notify, in an order real traffic has.
enum PipelineSender {
    /// Sends every notification through the simulator; each scenario call returns once ingest has answered.
    ///
    /// Sender `k` owns subscriptions `k`, `k + senders`, … and goes round by round — every purchase, then
    /// every first renewal, … — so each lineage's calls stay in order while consecutive notifications of one
    /// lineage are about S notifications apart in the stream, as with real traffic (Apple never sends one
    /// subscription's renewals back to back).
    static func send(_ store: any PipelineBenchStore, go: PipelineStoreProcess.Go) async -> PipelineStoreProcess.Sent {
        let plan = PipelineBenchmark.plan(notifications: go.notifications, subscriptions: go.subscriptions)
        let tokens = go.tokens
        let senders = min(go.senders, plan.count)
        let started = ContinuousClock.now
        let pacer = go.rate.map { Pacer(rate: $0, start: started) }
        let sent = await withTaskGroup(of: SentNotifications.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    var sent = SentNotifications()
                    let owned = Array(stride(from: sender, to: plan.count, by: senders))
                    var lineages: [Int: String] = [:]
                    for round in 0..<(plan.first ?? 0) {
                        for subscription in owned where round < plan[subscription] {
                            await pacer?.wait()
                            do {
                                if let lineage = lineages[subscription] {
                                    sent.record(try await store.renew(lineage))
                                } else if round == 0 {
                                    let bought = try await store.purchase(token: tokens[subscription])
                                    lineages[subscription] = bought.lineage
                                    sent.record(bought.delivery)
                                }
                            } catch {
                                sent.fail("scenario: \(error)")
                            }
                        }
                    }
                    return sent
                }
            }
            return await group.reduce(into: SentNotifications()) { $0.merge($1) }
        }
        let sending = (sent.lastAccepted ?? started) - started
        // The first acceptance on the wall clock, which the other process reads the same.
        let firstAccepted = sent.firstAccepted.map { Date.now.addingTimeInterval(-(ContinuousClock.now - $0).seconds) }
        return PipelineStoreProcess.Sent(accepted: sent.accepted, refused: sent.refused, firstError: sent.firstError,
                                         messageIDs: sent.messageIDs, sendingSeconds: sending.seconds,
                                         firstAccepted: firstAccepted)
    }
}
