import Crypto
import Foundation
import StoreModel

/// Everything the simulated Play Store knows, changed only under the simulator's lock: the clock, purchase
/// tokens, orders, voided purchases and the acknowledgements received.
///
/// The scenario commands (in the `PlayState+…` files) check that a change is one Google could make, apply it
/// as Google would and describe the Real-time developer notifications it causes.
struct PlayState: Sendable {
    let apps: [String: SimulatedPlayApp]
    private(set) var nowMilliseconds: Int64
    private(set) var subscriptions: [String: SimulatedPlaySubscription] = [:]
    private(set) var orders: [String: SimulatedPlayOrder] = [:]
    private(set) var voided: [VoidedPurchaseRecord] = []
    var acknowledgements: [PlayAcknowledgement] = []
    /// The digits of the next base order id (`GPA.3352-0306-9721-14048` style); renewals append `..N`. Google's
    /// order ids are unique across all apps, so each simulator starts at a random point: two simulators writing to
    /// one database (benchmark runs, say) must not name the same charges.
    private var nextOrderNumber = Int64.random(in: 10_000_000_000_000_000..<90_000_000_000_000_000)

    init(apps: [String: SimulatedPlayApp], start: Date) {
        self.apps = apps
        nowMilliseconds = start.milliseconds
    }

    var now: Int64 { nowMilliseconds }

    /// Moves the clock forward to `milliseconds`; an earlier time leaves it where it is.
    mutating func advanceClock(to milliseconds: Int64) {
        nowMilliseconds = max(nowMilliseconds, milliseconds)
    }

    /// Moves the clock forward within `ClockBounds`.
    mutating func advanceClock(by duration: Duration) throws {
        nowMilliseconds = try ClockBounds.advanced(nowMilliseconds, by: duration)
    }

    // MARK: Lookups

    /// The app `packageName` names; without one, the only app configured.
    func app(_ packageName: String?) throws -> SimulatedPlayApp {
        if let packageName {
            guard let app = apps[packageName] else { throw SimulatorError(.unknownApp, "no Play app with package \(packageName)") }
            return app
        }
        guard apps.count == 1, let only = apps.values.first else {
            throw SimulatorError(.unknownApp, "several Play apps are configured: name the package")
        }
        return only
    }

    func subscription(_ purchaseToken: String) throws -> SimulatedPlaySubscription {
        guard let subscription = subscriptions[purchaseToken] else {
            throw SimulatorError(.notFound, "no purchase token \(purchaseToken.prefix(40))…")
        }
        return subscription
    }

    /// A subscription's app: subscriptions are only created for configured apps, which never change.
    func app(of subscription: SimulatedPlaySubscription) -> SimulatedPlayApp {
        apps[subscription.packageName]!
    }

    // MARK: Changes

    mutating func store(_ subscription: SimulatedPlaySubscription) {
        subscriptions[subscription.purchaseToken] = subscription
    }

    mutating func store(_ order: SimulatedPlayOrder) {
        orders[order.orderId] = order
    }

    mutating func record(_ voidedPurchase: VoidedPurchaseRecord) {
        voided.append(voidedPurchase)
    }

    /// A new base order id, `GPA.dddd-dddd-dddd-ddddd`; the digits step by a prime so ids look unrelated.
    mutating func newOrderID() -> String {
        let digits = String(nextOrderNumber)
        nextOrderNumber += 7_919
        let characters = Array(digits)
        let groups = [characters[0..<4], characters[4..<8], characters[8..<12], characters[12...]].map { String($0) }
        return "GPA." + groups.joined(separator: "-")
    }

    /// An opaque purchase token shaped like Google's: 24 lowercase letters, a dot, then a long base64url tail.
    static func newPurchaseToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let letters = (0..<24).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122, using: &generator))) }
        let tail = (0..<90).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return String(letters) + ".AO-J1O" + Base64URL.encode(tail)
    }

    // MARK: Argument checks

    static func checkIdentifier(_ value: String, _ name: String, maxLength: Int = 255) throws {
        guard !value.isEmpty, value.utf8.count <= maxLength,
              value.utf8.allSatisfy({ (0x21...0x7e).contains($0) && $0 != UInt8(ascii: "/") }) else {
            throw SimulatorError(.invalidArgument, "\(name) must have 1 to \(maxLength) printable ASCII characters without / or spaces")
        }
    }

    /// A charge in minor units, and its tax share, must be exact money in `currency`.
    static func checkPrice(_ price: Int64, tax: Int64, currency: String) throws {
        guard price >= 0, (0...price).contains(tax) else {
            throw SimulatorError(.invalidArgument, "price must not be negative and tax must be 0...price, got \(price) and \(tax)")
        }
        do {
            _ = try Money.fromUnits(0, nanos: 0, currency: currency)
        } catch {
            throw SimulatorError(.invalidArgument, "currency: \(error)")
        }
    }
}

/// A state change and the notifications Google sends for it, in order.
struct PlayChange: Sendable {
    let purchaseToken: String
    /// The order the change created or refunded, if any.
    let orderId: String?
    let notifications: [PlayNotification]
}
