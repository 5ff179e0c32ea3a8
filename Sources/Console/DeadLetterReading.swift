import Accounts
import AppStore
import Crypto
import Foundation
import GooglePlay
import Ingest
import IngestJobs
import Mirror
import Postgres
import Queue
import StoreModel
import Sync

/// What a dead letter is about, read for people: a notification decoded WITHOUT verification (its facts, and what
/// verifying it says now, beside each other), a store job's subject, and the purchase either concerns.
struct DeadLetterReading: Sendable {
    /// The facts shown, label and value, in order.
    let facts: [(String, String)]
    /// The decoded document (the notification's JSON, the push's message), pretty-printed; nil when there is none.
    let decoded: String?
    /// What went wrong decoding it, if something did.
    let problem: String?
    /// Where the purchase it concerns is, as the mirror would find it.
    let reference: PurchaseSearch.Reference?
    /// For notifications: the store, and when it arrived (what a push token's age is judged at).
    let notification: (source: WebhookSource, receivedAt: Date)?

    /// Reads `detail`; `trust` is the account's connections (for which connection, of which app and environment, a
    /// notification is), nil when its account is gone.
    init(_ detail: DeadLetters.Detail, trust: HostTrust?) {
        let kind = detail.entry.kind
        if kind == AppleNotifications.kind.name {
            self.init(apple: detail, trust: trust)
        } else if kind == GoogleNotifications.kind.name {
            self.init(google: detail, trust: trust)
        } else {
            let subject = JobSubject.of(kind: kind, payload: detail.payload)
            let reference: PurchaseSearch.Reference? = switch subject {
            case .lineage(let connection, let lineage): .lineage(connectionIDs: [connection], lineage)
            case .purchase(_, let purchase): .id(purchase)
            case .transaction(let connection, let transaction): .transaction(connectionIDs: [connection], transaction)
            case .connection, nil: nil
            }
            self.init(facts: Self.facts(of: subject), decoded: nil, problem: nil, reference: reference, notification: nil)
        }
    }

    private init(facts: [(String, String)], decoded: String?, problem: String?, reference: PurchaseSearch.Reference?,
                 notification: (source: WebhookSource, receivedAt: Date)?) {
        self.facts = facts
        self.decoded = decoded
        self.problem = problem
        self.reference = reference
        self.notification = notification
    }

    private init(apple detail: DeadLetters.Detail, trust: HostTrust?) {
        let arrival = (source: WebhookSource.apple, receivedAt: detail.entry.createdAt)
        do {
            let signed = try NotificationRouting.signedPayload(fromBody: detail.raw ?? Data())
            let payload = try UnverifiedPayload.notification(signed)
            let data = payload.data
            let transaction = try data?.signedTransactionInfo.map(UnverifiedPayload.transaction)
            let event = [payload.notificationType, payload.subtype].compactMap { $0 }.joined(separator: "/")
            // The connection of the notification's own environment, as the worker chooses it.
            let connections = trust?.connections(store: .apple, appIdentifier: data?.bundleId ?? "")
                .filter { $0.environment.rawValue == data?.environment?.rawValue }.map(\.id) ?? []
            self.init(facts: [("Notification", event), ("notificationUUID", payload.notificationUUID),
                              ("Signed", payload.signedDate.map { $0.formatted(.iso8601) } ?? "—"),
                              ("Bundle", data?.bundleId ?? "—"), ("Environment", data?.environment?.rawValue ?? "—"),
                              ("Product", transaction?.productId ?? "—"), ("Transaction", transaction?.transactionId ?? "—"),
                              ("Account token", transaction?.appAccountToken ?? "—"),
                              ("Lineage (original transaction)", transaction?.originalTransactionId ?? "—")],
                      decoded: Self.pretty(try JWSParts(signed).payload), problem: nil,
                      reference: transaction?.originalTransactionId.map { .lineage(connectionIDs: connections, $0) },
                      notification: arrival)
        } catch {
            self.init(facts: [], decoded: nil, problem: "The stored body cannot be read as an App Store notification: \(error)",
                      reference: nil, notification: arrival)
        }
    }

    private init(google detail: DeadLetters.Detail, trust: HostTrust?) {
        let arrival = (source: WebhookSource.googlePlay, receivedAt: detail.entry.createdAt)
        do {
            let push = try PubSubPush(body: detail.raw ?? Data())
            let notification = try push.developerNotification()
            var facts: [(String, String)] = [("Pub/Sub message", push.messageID), ("Subscription", push.subscription ?? "—"),
                                             ("Package", notification.packageName),
                                             ("Event time", notification.eventTime.formatted(.iso8601))]
            let token: String?
            switch notification.content {
            case .subscription(let subscription):
                facts.append(("Notification", "subscription, \(subscription.notificationType)"))
                token = subscription.purchaseToken
            case .voidedPurchase(let voided):
                facts.append(("Notification", "voided purchase, order \(voided.orderId)"))
                token = voided.purchaseToken
            case .oneTimeProduct: (facts, token) = (facts + [("Notification", "one-time product")], nil)
            case .test: (facts, token) = (facts + [("Notification", "test")], nil)
            case .other(let name): (facts, token) = (facts + [("Notification", name)], nil)
            }
            if let token { facts.append(("Purchase token", token)) }
            let connections = trust?.connections(store: .google, appIdentifier: notification.packageName).map(\.id) ?? []
            self.init(facts: facts, decoded: Self.pretty(push.data), problem: nil,
                      reference: token.map { .token(connectionIDs: connections, $0) }, notification: arrival)
        } catch {
            self.init(facts: [], decoded: nil,
                      problem: "The stored body cannot be read as a Play developer notification push: \(error)",
                      reference: nil, notification: arrival)
        }
    }

    private static func facts(of subject: JobSubject?) -> [(String, String)] {
        switch subject {
        case .lineage(let connection, let lineage): [("Connection", String(connection)), ("Lineage", lineage)]
        case .purchase(let connection, let purchase): [("Connection", String(connection)), ("Purchase", String(purchase))]
        case .transaction(let connection, let transaction): [("Connection", String(connection)), ("Transaction", transaction)]
        case .connection(let connection): [("Connection", String(connection))]
        case nil: []
        }
    }

    /// JSON indented for reading, or the text as it is when it is not JSON.
    static func pretty(_ json: Data) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: json),
              let printed = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        else { return String(decoding: json.prefix(64 * 1024), as: UTF8.self) }
        return String(decoding: printed, as: UTF8.self)
    }

    /// The headers ingest kept, without the push's bearer token (a credential, even if a short-lived one); nil for
    /// headers that are not the JSON object ingest writes, which are not shown at all.
    static func shownHeaders(_ headers: String?) -> String? {
        guard let headers, var object = try? JSONSerialization.jsonObject(with: Data(headers.utf8)) as? [String: Any] else {
            return nil
        }
        if object["authorization"] != nil { object["authorization"] = "(a bearer token, not shown)" }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]))
            .map { String(decoding: $0, as: UTF8.self) }
    }
}
