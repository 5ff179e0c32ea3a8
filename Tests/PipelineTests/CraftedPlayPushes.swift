import Crypto
import Foundation
import HTTP
import Simulator
import Testing

/// Pushes authenticated as Pub/Sub authenticates them — an OIDC token for the pipeline's push audience and account,
/// signed with one key the simulated Google publishes from when this is made — carrying the message id and
/// subscription a test chooses, which the simulator's own pushes leave to the simulator. One key for all of a
/// test's pushes: the worker's key cache refetches for an unknown key at most once a minute.
struct CraftedPlayPushes {
    let pipeline: Pipeline
    private let signingKey: PrivateKey
    private let kid: String

    init(_ pipeline: Pipeline) throws {
        signingKey = try PrivateKey.generate(.rsa(bits: 2048))
        kid = try #require(pipeline.play).rotatePushKey(to: signingKey)
        self.pipeline = pipeline
    }

    /// A push of a purchase notification about `purchaseToken` as `messageID` from `subscription`: its body and
    /// its `Authorization` value.
    func push(messageID: String, purchaseToken: String, subscription: String = PlayPushTarget.defaultSubscription) throws
        -> (body: Data, authorization: String)
    {
        let now = Int(Date().timeIntervalSince1970)
        let notification: [String: Any] = [
            "version": "1.0", "packageName": Pipeline.packageName, "eventTimeMillis": String(now * 1000),
            "subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": purchaseToken],
        ]
        let envelope: [String: Any] = [
            "message": ["data": try JSONSerialization.data(withJSONObject: notification).base64EncodedString(),
                        "messageId": messageID] as [String: Any],
            "subscription": subscription,
        ]
        let claims: [String: Any] = [
            "iss": "https://accounts.google.com", "aud": Pipeline.pushAudience, "email": Pipeline.pushAccount,
            "email_verified": true, "sub": "104857600000000000001", "iat": now, "exp": now + 3600,
        ]
        let token = try CompactJWS.sign(payload: try JSONSerialization.data(withJSONObject: claims), algorithm: .rs256,
                                        key: signingKey, kid: kid, typ: "JWT")
        return (try JSONSerialization.data(withJSONObject: envelope), "Bearer " + token)
    }

    /// Posts `push(…)` to the ingest `copies` times; returns the HTTP statuses.
    func post(messageID: String, purchaseToken: String, subscription: String = PlayPushTarget.defaultSubscription,
              copies: Int = 1) async throws -> [Int] {
        let (body, authorization) = try push(messageID: messageID, purchaseToken: purchaseToken, subscription: subscription)
        let url = try #require(pipeline.ingestURL).replacingOccurrences(of: "/webhook/apple", with: "/webhook/google-play")
        let request = HTTPClientRequest(method: "POST", url: url,
                                        headers: [("Host", Pipeline.host), ("Content-Type", "application/json"),
                                                  ("Authorization", authorization)],
                                        body: body)
        let client = try HTTPClient()
        do {
            var statuses: [Int] = []
            for _ in 0..<copies { statuses.append(try await client.send(request).status) }
            await client.shutdown()
            return statuses
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
