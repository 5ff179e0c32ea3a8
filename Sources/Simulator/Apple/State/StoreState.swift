import AppStore
import Foundation
import StoreModel

/// Everything the simulated App Store knows, changed only under the simulator's lock: the clock, the
/// subscriptions and their transactions, the consumption answers received and the notifications signed.
///
/// The scenario commands (in the `StoreState+…` files) check that a change is one the App Store could make,
/// apply it as Apple would, and describe the notification Apple would send.
struct StoreState: Sendable {
    let apps: [String: SimulatedApp]
    private(set) var nowMilliseconds: Int64
    private(set) var subscriptions: [String: SimulatedSubscription] = [:]
    private(set) var transactions: [String: SimulatedTransaction] = [:]
    /// transactionId → the sequence number of its last change: Get Transaction History's "modified" order,
    /// so a transaction changed later (refunded, upgraded) moves behind a revision already handed out.
    private(set) var modificationSequence: [String: Int64] = [:]
    /// The sequence number of the latest change: no revision handed out points past it.
    private(set) var lastSequence: Int64 = 0
    private var lastTransactionNumber: Int64
    /// Line item ids count up from 100 million above the base, apart from the transaction ids.
    private var lastLineItemNumber: Int64
    var consumptionRequests: [ConsumptionRecord] = []
    var notifications: [LoggedNotification] = []

    /// Leaves room above the base for both id sequences without overflow.
    static let maximumTransactionNumberBase: Int64 = 9_000_000_000_000_000_000
    init(apps: [String: SimulatedApp], start: Date, transactionNumberBase: Int64) {
        self.apps = apps
        nowMilliseconds = start.milliseconds
        lastTransactionNumber = transactionNumberBase
        lastLineItemNumber = transactionNumberBase + 100_000_000
    }

    var now: Date { Date(milliseconds: nowMilliseconds) }

    /// Moves the clock forward to `date`; an earlier date leaves it where it is (time never runs backwards,
    /// or signed dates would stop being ordered).
    mutating func advanceClock(to date: Date) {
        nowMilliseconds = max(nowMilliseconds, date.milliseconds)
    }

    /// Moves the clock forward within `ClockBounds`.
    mutating func advanceClock(by duration: Duration) throws {
        nowMilliseconds = try ClockBounds.advanced(nowMilliseconds, by: duration)
    }

    // MARK: Lookups

    /// The app `bundleID` names; without one, the only app configured.
    func app(_ bundleID: String?) throws -> SimulatedApp {
        if let bundleID {
            guard let app = apps[bundleID] else { throw SimulatorError(.unknownApp, "no app with bundle id \(bundleID)") }
            return app
        }
        guard apps.count == 1, let only = apps.values.first else {
            throw SimulatorError(.unknownApp, "several apps are configured: name the bundle id")
        }
        return only
    }

    func subscription(_ originalTransactionId: String) throws -> SimulatedSubscription {
        guard let subscription = subscriptions[originalTransactionId] else {
            throw SimulatorError(.notFound, "no subscription with originalTransactionId \(originalTransactionId)")
        }
        return subscription
    }

    /// The lineage of any of its transaction ids, as the server API resolves `{transactionId}`.
    func lineage(containing transactionId: String) -> SimulatedSubscription? {
        transactions[transactionId].flatMap { subscriptions[$0.originalTransactionId] }
    }

    /// A subscription's app: subscriptions are only ever created for configured apps, which never change.
    func app(of subscription: SimulatedSubscription) -> SimulatedApp {
        apps[subscription.bundleId]!
    }

    func latestTransaction(of subscription: SimulatedSubscription) -> SimulatedTransaction {
        // Every subscription is created with its first transaction, and transactions are never removed.
        transactions[subscription.latestTransactionId]!
    }

    /// A transaction of `subscription`: `transactionId`, or the current period's when `nil`.
    func transaction(_ transactionId: String?, of subscription: SimulatedSubscription) throws -> SimulatedTransaction {
        guard let transactionId else { return latestTransaction(of: subscription) }
        guard let transaction = transactions[transactionId],
              transaction.originalTransactionId == subscription.originalTransactionId else {
            throw SimulatorError(.notFound, "subscription \(subscription.originalTransactionId) has no transaction \(transactionId)")
        }
        return transaction
    }

    // MARK: Changes

    mutating func newTransactionID() -> String {
        lastTransactionNumber += 1
        return String(lastTransactionNumber)
    }

    mutating func newLineItemID() -> String {
        lastLineItemNumber += 1
        return String(lastLineItemNumber)
    }

    /// Adds or replaces a transaction; either way it counts as modified now.
    mutating func store(_ transaction: SimulatedTransaction) {
        lastSequence += 1
        transactions[transaction.transactionId] = transaction
        modificationSequence[transaction.transactionId] = lastSequence
    }

    mutating func store(_ subscription: SimulatedSubscription) {
        subscriptions[subscription.originalTransactionId] = subscription
    }

    /// The notification a command causes, describing the subscription as it now stands.
    func event(_ type: String, _ subtype: String?, _ subscription: SimulatedSubscription,
               transaction: SimulatedTransaction? = nil, consumptionRequestReason: ConsumptionRequestReason? = nil)
        -> ScenarioEvent
    {
        ScenarioEvent(notificationType: type, subtype: subtype, app: app(of: subscription),
                      subscription: subscription, transaction: transaction ?? latestTransaction(of: subscription),
                      consumptionRequestReason: consumptionRequestReason, signedDate: now)
    }

    // MARK: Argument checks

    static func checkProduct(_ productId: String) throws {
        guard !productId.isEmpty, productId.utf8.count <= 255 else {
            throw SimulatorError(.invalidArgument, "a product id must have 1 to 255 characters")
        }
    }

    /// A price in milliunits must be representable as exact money in `currency`.
    static func checkPrice(_ price: Int64, currency: String) throws {
        guard price >= 0 else { throw SimulatorError(.invalidArgument, "price must not be negative, got \(price)") }
        do {
            _ = try Money.fromMilliunits(price, currency: currency)
        } catch {
            throw SimulatorError(.invalidArgument, "price \(price) \(currency): \(error)")
        }
    }
}

/// A state change and the notification Apple sends for it.
struct ScenarioEvent: Sendable {
    let notificationType: String
    let subtype: String?
    let app: SimulatedApp
    let subscription: SimulatedSubscription
    let transaction: SimulatedTransaction
    let consumptionRequestReason: ConsumptionRequestReason?
    let signedDate: Date
}
