/// Why a Pub/Sub push or the Real-time developer notification inside it could not be read. All are permanent for
/// that push: the same bytes fail the same way, so the job dead-letters with this message for on-call.
public struct GoogleNotificationError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The push body or its decoded `data` is larger than any notification Google sends.
        public static let tooLarge = Code("too large")
        /// The push body is not Pub/Sub's envelope: not JSON, no `message`, no or contradictory `messageId`, a
        /// `publishTime` that is not RFC 3339, a `subscription` too long or unprintable to be a subscription name.
        public static let invalidEnvelope = Code("invalid envelope")
        /// `message.data` is missing, empty or not standard base64.
        public static let invalidData = Code("invalid data")
        /// The decoded data is not a `DeveloperNotification`: not JSON, a missing or malformed field, not exactly
        /// one notification object.
        public static let invalidNotification = Code("invalid notification")

        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "Google notification \(code): \(message)" }
}
