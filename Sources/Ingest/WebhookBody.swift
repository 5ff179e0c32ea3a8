import AppStore
import Foundation
import GooglePlay
import HTTP
import IngestJobs
import Queue

/// Which store a webhook endpoint receives from, and the job kind its notifications become.
public enum WebhookSource: String, Sendable, CaseIterable {
    case apple
    case googlePlay = "google-play"

    public var jobKind: JobKind {
        switch self {
        case .apple: AppleNotifications.kind
        case .googlePlay: GoogleNotifications.kind
        }
    }

    public var path: String { "/webhook/\(rawValue)" }
}

/// The cheap checks an ingestion endpoint makes before storing a body: valid JSON of the store's outer shape.
/// Everything deeper (signatures, tokens, payload contents) is the worker's job, so a slow or unusual body
/// never holds up the endpoint — but a body that can never be processed is refused at once (400), since
/// the store will keep sending what it was told was accepted.
public enum WebhookBody {
    /// Why a body was refused; the text goes back to the sender as `{"error": …}`.
    public struct Rejection: Error, Equatable, Sendable {
        public let reason: String
    }

    public static func check(_ body: Data, from source: WebhookSource) -> Rejection? {
        if case .failure(let rejection) = read(body, from: source) { return rejection }
        return nil
    }

    /// The checks, and what they read that verification needs next: an App Store body's `signedPayload`
    /// (nil for a Pub/Sub push), so it is taken out of the body once.
    static func read(_ body: Data, from source: WebhookSource) -> Result<String?, Rejection> {
        switch source {
        case .apple: readApple(body).map { $0 }
        case .googlePlay: checkGoogle(body).map { .failure($0) } ?? .success(nil)
        }
    }

    /// Read as the worker reads it, so a body accepted here is one the worker can route.
    private static func readApple(_ body: Data) -> Result<String, Rejection> {
        let signed: String
        do {
            signed = try NotificationRouting.signedPayload(fromBody: body)
        } catch let error as AppStoreVerificationError {
            return .failure(Rejection(reason: error.reason))
        } catch {
            return .failure(Rejection(reason: "body is not a JSON object"))
        }
        // Three parts are two dots; counting them avoids building the parts for every webhook.
        guard dots(in: signed) == 2 else { return .failure(Rejection(reason: "signedPayload is not a compact JWS")) }
        return .success(signed)
    }

    /// The envelope read as the worker reads it (`PubSubPush`: the messageId it deduplicates on, the data it
    /// decodes), so a push accepted here is one the worker can take apart; and what Pub/Sub always sends, a
    /// subscription and data, must be there.
    private static func checkGoogle(_ body: Data) -> Rejection? {
        let push: PubSubPush
        do {
            push = try PubSubPush(body: body)
        } catch {
            return Rejection(reason: error.message)
        }
        guard !push.data.isEmpty else { return Rejection(reason: "message.data is missing or empty") }
        guard push.subscription?.isEmpty == false else { return Rejection(reason: "body has no subscription string") }
        return nil
    }

    private static func dots(in text: String) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var count = 0
            for byte in bytes where byte == UInt8(ascii: ".") { count += 1 }
            return count
        }
    }
}
