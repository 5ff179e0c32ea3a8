import Foundation
import StrictJSON

/// A Cloud Pub/Sub push request in the default (wrapped) format: the envelope around one message. Read leniently,
/// as real pushes send both `messageId` and `message_id` (and `publishTime` / `publish_time`) and Pub/Sub adds
/// fields over time; unknown keys are ignored, contradictions refused.
public struct PubSubPush: Sendable {
    /// Larger bodies are refused before parsing; a push of one notification is about 1 KiB.
    public static let maxBodyBytes = 64 * 1024
    /// Longest `messageId` accepted: it is the deduplication key, stored in `notification_receipts.message_id`,
    /// which holds at most 200 characters. Pub/Sub assigns decimal ids of about 16 digits, so a longer one is
    /// not Pub/Sub's; accepted, it could never commit its receipt and would retry until it dead-lettered.
    public static let maxMessageIDLength = 200
    /// Longest `subscription` accepted: it scopes the deduplication key (`notification_receipts.scope`, see
    /// `ReceiptScope`), as a messageId is unique only within its topic. A subscription's full name is
    /// `projects/{project}/subscriptions/{id}`, with an id of at most 255 characters and a project id of at most 30
    /// (309 in all), or somewhat more for a legacy domain-scoped project (`example.com:project`); 400 leaves room
    /// for those and still bounds the key.
    public static let maxSubscriptionLength = 400

    /// Unique within the topic: what duplicate deliveries share.
    public let messageID: String
    public let publishTime: Date?
    /// `projects/{project}/subscriptions/{name}`, when sent: what `messageID` is unique within, as a
    /// subscription reads one topic. At most `maxSubscriptionLength` bytes of printable ASCII without spaces.
    public let subscription: String?
    /// The message's `data`, base64-decoded; empty when the message had none.
    public let data: Data

    /// Reads a push body. Throws `GoogleNotificationError` (`.tooLarge`, `.invalidEnvelope`, `.invalidData`).
    public init(body: Data) throws(GoogleNotificationError) {
        guard body.count <= Self.maxBodyBytes else {
            throw GoogleNotificationError(.tooLarge, "the push body is \(body.count) bytes, more than \(Self.maxBodyBytes)")
        }
        let envelope: Envelope
        do {
            envelope = try JSONReader.read(body, Envelope.init(json:))
        } catch {
            throw GoogleNotificationError(.invalidEnvelope, "the push body is not a Pub/Sub envelope: \(error)")
        }
        guard let message = envelope.message else {
            throw GoogleNotificationError(.invalidEnvelope, "the push body has no message object")
        }
        guard let id = try Self.agreeing("messageId", message.messageId, message.messageIdSnake), !id.isEmpty else {
            throw GoogleNotificationError(.invalidEnvelope, "message.messageId is missing or empty")
        }
        guard id.utf8.count <= Self.maxMessageIDLength else {
            throw GoogleNotificationError(.invalidEnvelope, "message.messageId is \(id.utf8.count) bytes, longer than the "
                                          + "\(Self.maxMessageIDLength) kept for deduplication (Pub/Sub's are about 16 digits)")
        }
        guard id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw GoogleNotificationError(.invalidEnvelope, "message.messageId is not printable ASCII without spaces")
        }
        if let time = try Self.agreeing("publishTime", message.publishTime, message.publishTimeSnake) {
            guard let date = GoogleTimestamp.parse(time) else {
                throw GoogleNotificationError(.invalidEnvelope, "message.publishTime \(time.prefix(48).debugDescription) is "
                                              + "not an RFC 3339 time")
            }
            publishTime = date
        } else {
            publishTime = nil
        }
        if let subscription = envelope.subscription {
            try Self.checkSubscription(subscription)
        }
        messageID = id
        subscription = envelope.subscription
        data = try Self.base64(message.data ?? "")
    }

    /// The Real-time developer notification the message carries. Throws `GoogleNotificationError`.
    public func developerNotification() throws(GoogleNotificationError) -> DeveloperNotification {
        guard !data.isEmpty else { throw GoogleNotificationError(.invalidData, "message.data is missing or empty") }
        return try DeveloperNotification(json: data)
    }

    /// A subscription name as Pub/Sub forms them; a longer or unprintable one is not Pub/Sub's, and accepted it
    /// would fail its receipt (or, with spaces, blur `ReceiptScope`'s forms).
    private static func checkSubscription(_ subscription: String) throws(GoogleNotificationError) {
        guard subscription.utf8.count <= maxSubscriptionLength else {
            throw GoogleNotificationError(.invalidEnvelope, "subscription is \(subscription.utf8.count) bytes, longer than "
                                          + "the \(maxSubscriptionLength) a Pub/Sub subscription name can be")
        }
        guard subscription.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw GoogleNotificationError(.invalidEnvelope, "subscription is not printable ASCII without spaces")
        }
    }

    /// The value of a field Pub/Sub may spell two ways; both present must agree.
    private static func agreeing(_ name: String, _ camel: String?, _ snake: String?) throws(GoogleNotificationError) -> String? {
        if let camel, let snake, camel != snake {
            throw GoogleNotificationError(.invalidEnvelope, "message.\(name) and its snake_case spelling disagree")
        }
        return camel ?? snake
    }

    /// Standard base64 as Pub/Sub sends it; missing padding is tolerated, anything outside the alphabet is not.
    private static func base64(_ text: String) throws(GoogleNotificationError) -> Data {
        guard !text.isEmpty else { return Data() }
        guard text.utf8.count <= DeveloperNotification.maxLength * 4 / 3 + 4 else {
            throw GoogleNotificationError(.tooLarge, "message.data is \(text.utf8.count) base64 characters, more than a "
                                          + "\(DeveloperNotification.maxLength)-byte notification needs")
        }
        let padded = text + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: padded) else {
            throw GoogleNotificationError(.invalidData, "message.data is not standard base64")
        }
        return data
    }

    /// Pub/Sub's `PushRequest`, with the snake_case duplicates real pushes carry. `publishTime` is kept as text:
    /// it is checked once both spellings agree.
    private struct Envelope: JSONReadable {
        struct Message: JSONReadable {
            var data: String?
            var messageId: String?
            var messageIdSnake: String?
            var publishTime: String?
            var publishTimeSnake: String?

            init(json reader: inout JSONReader) throws {
                try reader.readObject { reader, key in
                    switch key {
                    case "data": data = try reader.readString()
                    case "messageId": messageId = try reader.readString()
                    case "message_id": messageIdSnake = try reader.readString()
                    case "publishTime": publishTime = try reader.readString()
                    case "publish_time": publishTimeSnake = try reader.readString()
                    default: try reader.skipValue()
                    }
                }
            }
        }

        var message: Message?
        var subscription: String?

        init(json reader: inout JSONReader) throws {
            try reader.readObject { reader, key in
                switch key {
                case "message": message = try reader.readOptional(Message.init(json:))
                case "subscription": subscription = try reader.readString()
                default: try reader.skipValue()
                }
            }
        }
    }
}
