import Foundation
import Queue

// The jobs `Ingest` hands to the workers, declared apart from both: `Ingest` writes them (and the SQL it
// calls, `storesync_ingest`, builds the notifications' payload), `Sync` runs them, and neither imports the
// other — ingest links no store clients, the workers no HTTP server. Both import this module, which needs
// only `Queue`.

/// Which store's webhook a notification job holds: the kind it is queued as.
public protocol NotificationSource: Sendable {
    static var kind: JobKind { get }
}

/// `POST /webhook/apple`: an App Store Server Notification.
public enum AppleNotifications: NotificationSource {
    public static let kind: JobKind = "apple.notification"
}

/// `POST /webhook/google-play`: a Pub/Sub push of a Play developer notification.
public enum GoogleNotifications: NotificationSource {
    public static let kind: JobKind = "google.notification"
}

/// A stored notification. The store's bytes travel beside the payload, in the job's `raw` and `headers`
/// (a push's `Authorization`), since their signatures are checked on exactly what was sent.
///
/// `storesync_ingest` (V0002) builds this object in SQL for what `serve` accepted: the account its `Host`
/// named and when it arrived. The App Store notification-history sweep writes it in Swift for what Apple
/// failed to deliver, with `source` `history` and no arrival.
public struct NotificationArgs<Source: NotificationSource>: JobArgs {
    public static var kind: JobKind { Source.kind }

    public let accountID: Int64
    public let receivedAt: Date?
    /// `history` for a notification the sweep fetched; nil for a delivered one.
    public let source: String?

    public init(accountID: Int64, receivedAt: Date? = nil, source: String? = nil) {
        self.accountID = accountID
        self.receivedAt = receivedAt
        self.source = source
    }

    enum CodingKeys: String, CodingKey {
        case accountID = "account_id", receivedAt = "received_at", source
    }
}

public typealias AppleNotificationArgs = NotificationArgs<AppleNotifications>
public typealias GoogleNotificationArgs = NotificationArgs<GoogleNotifications>

/// `sync.outage`: the hosts whose webhooks `serve` answered 503 while its database was out of reach, and
/// when, so the workers sweep those hosts' store history at once instead of waiting for Apple's retries.
public struct OutageSweepArgs: JobArgs {
    public static let kind: JobKind = "sync.outage"

    public let hosts: [String]
    public let from: Date
    public let to: Date

    public init(hosts: [String], from: Date, to: Date) {
        self.hosts = hosts
        self.from = from
        self.to = to
    }
}

/// The headers ingest keeps beside a notification's body (`jobs.headers`, a JSON object), as the worker and the
/// on-call console read them.
public enum IngestedHeaders {
    /// The `Authorization` header ingest kept (Google pushes), if any.
    public static func authorization(_ headers: String?) -> String? {
        guard let headers, let object = try? JSONSerialization.jsonObject(with: Data(headers.utf8)) as? [String: Any]
        else { return nil }
        return object["authorization"] as? String
    }
}
