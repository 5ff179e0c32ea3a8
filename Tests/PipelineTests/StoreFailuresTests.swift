import AppStore
import Foundation
@testable import GooglePlay
import HTTP
import Queue
@testable import Sync
import Testing

/// How a failed store call becomes the queue's decision: a failed TLS handshake is retried only
/// `handshakeAttempts` times (an https URL at a plain-HTTP port never succeeds), then dead-letters with
/// libcurl's reason; transient transport failures keep retrying; trust failures dead-letter at once. Google's
/// answers: a refused service account retries for days, a token Google does not know dead-letters.
@Suite struct StoreFailuresTests {
    static let curlMessage = "GET /inApps/v1/subscriptions/1 got no response: HTTP client error (tls handshake): "
        + "SSL connect error: OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number"

    @Test(arguments: [
        (HTTPClientError.Code.tlsHandshake, 1, JobFailure.Code.retryable),
        (.tlsHandshake, 5, .retryable),
        (.tlsHandshake, 6, .permanent),
        (.tlsHandshake, 7, .permanent),
        (.connectionRefused, 3, .retryable),
        (.connectionReset, 3, .retryable),
        (.timeout, 24, .retryable),
        (.dns, 3, .retryable),
        (.tls, 1, .permanent),
        (.invalidRequest, 1, .permanent),
    ])
    func transportFailures(transport: HTTPClientError.Code, attempt: Int, expected: JobFailure.Code) {
        let apple = AppStoreAPIError(.transport, Self.curlMessage, transport: transport)
        let google = GooglePlayAPIError(.transport, Self.curlMessage, transport: transport)
        let failures = [
            (apple.description, StoreFailures.api(apple, attempt: attempt, vouched: true)),
            (google.description, StoreFailures.api(google, attempt: attempt)),
        ]
        for (description, failure) in failures {
            #expect(failure.code == expected, "\(failure)")
            #expect(failure.message.hasPrefix(description), "the dead letter keeps libcurl's reason: \(failure)")
        }
    }

    @Test(arguments: [1, 5, 6])
    func aFailedHandshakeSaysWhichAttemptAndWhatToCheck(attempt: Int) {
        let error = AppStoreAPIError(.transport, Self.curlMessage, transport: .tlsHandshake)
        let failure = StoreFailures.api(error, attempt: attempt, vouched: false)
        let note = attempt < 6
            ? " (attempt \(attempt) of 6 for a failed TLS handshake)"
            : " (the TLS handshake failed on attempt 6 of 6; check that the URL's host and port serve HTTPS)"
        #expect(failure.message == "App Store API transport: \(Self.curlMessage)" + note)
    }

    /// Google's token endpoint is reached the same way: its failed handshakes are bounded too.
    @Test func aFailedHandshakeWithGooglesTokenEndpointIsBounded() {
        let error = GooglePlayAPIError(.tokenUnavailable, Self.curlMessage, transport: .tlsHandshake)
        #expect(StoreFailures.api(error, attempt: 5).code == .retryable)
        #expect(StoreFailures.api(error, attempt: 6).code == .permanent)
    }

    /// Google's answer to `GET /…/tokens/T` as the client classifies it, with Google's JSON error body.
    static func google(_ status: Int, reason: String) -> GooglePlayAPIError {
        let body = #"{"error":{"code":\#(status),"message":"m","errors":[{"reason":"\#(reason)"}]}}"#
        return GooglePlayAPIError.classify(HTTPClientResponse(status: status, body: Data(body.utf8)),
                                           call: "GET /purchases/subscriptionsv2/tokens/T", now: Date())
    }

    /// Play Console permission grants take up to 24-48 hours to apply; a push dead-lettered meanwhile would never
    /// be mirrored or acknowledged, and Google refunds it after three days. So 401/403 retry, the dead letter
    /// (if the attempts run out) and every retry keep the Play Console hint, and only what cannot change
    /// dead-letters at once.
    @Test(arguments: [
        (401, "permissionDenied", JobFailure.Code.retryable),
        (403, "permissionDenied", .retryable),
        (404, "notFound", .permanent),
        (410, "subscriptionPurchaseNoLongerAvailable", .permanent),
        (400, "invalid", .permanent),
        (429, "rateLimitExceeded", .retryable),
        (503, "backendError", .retryable),
    ])
    func googleAnswers(status: Int, reason: String, expected: JobFailure.Code) {
        let error = Self.google(status, reason: reason)
        for attempt in [1, 24] {
            let failure = StoreFailures.api(error, attempt: attempt)
            #expect(failure.code == expected, "\(status) on attempt \(attempt): \(failure)")
            #expect(failure.message.hasPrefix(error.description), "\(failure)")
            #expect(StoreFailures.isPermissionDenied(error) == [401, 403].contains(status))
            if StoreFailures.isPermissionDenied(error) {
                #expect(failure.retryAfter == StoreFailures.permissionRetryInterval)
                #expect(failure.message.contains("Play Console") && failure.message.contains("attempt \(attempt);"),
                        "\(failure)")
            }
        }
    }

    /// With the queue's default policy and attempts, a refused service account keeps being retried for at least the
    /// 48 hours Google's permission changes can take, whatever the jitter.
    @Test func permissionRetriesSpanTwoDays() {
        let policy = RetryPolicy()
        let failure = StoreFailures.api(Self.google(403, reason: "permissionDenied"), attempt: 1)
        let retries = 25 - 1  // jobs.max_attempts defaults to 25 (sql/V0001__queue.sql)
        var generator = SystemRandomNumberGenerator()
        let span = (1...retries).map { policy.delay(afterAttempt: $0, retryAfter: failure.retryAfter, using: &generator) }
            .reduce(Duration.zero, +)
        #expect(span >= .seconds(48 * 3600), "\(span)")
        #expect(span <= .seconds(54 * 3600), "\(span)")
    }
}
