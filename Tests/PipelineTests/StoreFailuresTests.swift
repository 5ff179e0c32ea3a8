import AppStore
import Foundation
@testable import GooglePlay
import HTTP
import Queue
@testable import Sync
import TestSupport
import Testing

/// How a failed store call becomes the queue's decision: a failed TLS handshake is retried only so many times in
/// a row (an https URL at a plain-HTTP port never succeeds), then dead-letters with libcurl's reason; transient
/// transport failures keep retrying; trust failures dead-letter at once. Google's answers: a refused service
/// account retries for days, a token Google does not know dead-letters.
@Suite struct StoreFailuresTests {
    static let curlMessage = "GET /inApps/v1/subscriptions/1 got no response: HTTP client error (tls handshake): "
        + "SSL connect error: OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number"

    /// The last error a job would carry after `count` such failures in a row (nil: none before).
    static func after(_ count: Int, _ streak: FailureStreak, _ description: String) -> String? {
        (0..<count).reduce(nil as String?) { previous, _ in streak.decide(description, previous: previous).message }
    }

    @Test(arguments: [
        (HTTPClientError.Code.tlsHandshake, 0, JobFailure.Code.retryable),
        (.tlsHandshake, 4, .retryable),
        (.tlsHandshake, 5, .permanent),
        (.connectionRefused, 5, .retryable),
        (.connectionReset, 5, .retryable),
        (.timeout, 24, .retryable),
        (.dns, 5, .retryable),
        (.tls, 0, .permanent),
        (.invalidRequest, 0, .permanent),
    ])
    func transportFailures(transport: HTTPClientError.Code, handshakesBefore: Int, expected: JobFailure.Code) {
        let apple = AppStoreAPIError(.transport, Self.curlMessage, transport: transport)
        let google = GooglePlayAPIError(.transport, Self.curlMessage, transport: transport)
        let previous = Self.after(handshakesBefore, StoreFailures.handshake, apple.description)
        let failures = [
            (apple.description, StoreFailures.api(apple, previous: previous, vouched: true)),
            (google.description, StoreFailures.api(google, previous: previous)),
        ]
        for (description, failure) in failures {
            #expect(failure.code == expected, "\(failure)")
            #expect(failure.message.hasPrefix(description), "the dead letter keeps libcurl's reason: \(failure)")
        }
    }

    @Test func aFailedHandshakeSaysHowManyInARowAndWhatToCheck() {
        let error = AppStoreAPIError(.transport, Self.curlMessage, transport: .tlsHandshake)
        let first = StoreFailures.api(error, previous: nil, vouched: false)
        #expect(first.message == "App Store API transport: \(Self.curlMessage)"
            + " (failed TLS handshake 1 in a row, at most 6; the connection may have dropped)")
        let last = StoreFailures.api(error, previous: Self.after(5, StoreFailures.handshake, error.description), vouched: false)
        #expect(last.message == "App Store API transport: \(Self.curlMessage)"
            + " (failed TLS handshake 6 times in a row; check that the URL's host and port serve HTTPS)")
    }

    /// An outage's other failures count as attempts but not in the run: a job on its tenth attempt still gets
    /// the whole handshake budget, and a 5xx in between starts the run over.
    @Test func otherFailuresInBetweenStartTheRunOver() {
        let error = AppStoreAPIError(.transport, Self.curlMessage, transport: .tlsHandshake)
        let serverError = "App Store API server error: HTTP 503"
        #expect(StoreFailures.api(error, previous: serverError, vouched: false).code == .retryable)
        #expect(StoreFailures.handshake.run(before: serverError) == 0)
        #expect(StoreFailures.handshake.run(before: Self.after(4, StoreFailures.handshake, error.description)) == 4)
        #expect(StoreFailures.handshake.run(before: "lease expired: worker w did not finish attempt 9") == 0)
    }

    /// Apple not knowing a transaction it signed, and a 401 before the token is replaced, are bounded the same way.
    @Test(arguments: [
        (AppStoreAPIError.Code.transactionNotFound, true, 2, JobFailure.Code.retryable),
        (.transactionNotFound, true, 3, .permanent),
        (.transactionNotFound, false, 0, .permanent),
        (.unauthorized, false, 1, .retryable),
        (.unauthorized, false, 2, .permanent),
    ])
    func appleAnswersBoundedInARow(code: AppStoreAPIError.Code, vouched: Bool, before: Int, expected: JobFailure.Code) {
        let error = AppStoreAPIError(code, "Apple said no")
        let streak = code == .unauthorized ? StoreFailures.unauthorized : StoreFailures.notFound
        let failure = StoreFailures.api(error, previous: Self.after(before, streak, error.description), vouched: vouched)
        #expect(failure.code == expected, "\(failure)")
    }

    /// A push token signed with a key the cache does not hold: Google may have published it a moment ago, so it is
    /// retried over the minute the cache waits between refetches for unknown keys, then counts as forged.
    @Test(arguments: [(0, JobFailure.Code.retryable), (3, .retryable), (4, .permanent)])
    func anUnknownSigningKeyIsBoundedInARow(before: Int, expected: JobFailure.Code) {
        let description = "push authentication failed: unknown key: no Google key kid-9"
        let failure = StoreFailures.unknownSigningKey.decide(
            description, previous: Self.after(before, StoreFailures.unknownSigningKey, description))
        #expect(failure.code == expected, "\(failure)")
        #expect(failure.message.hasPrefix(description))
    }

    /// Retried with the queue's default backoff, the attempts span more than the key cache's minute between
    /// refetches for an unknown key, so a key Google has just published is fetched before the push gives up.
    @Test func theUnknownKeyRetriesOutlastTheKeyCachesRefetchPacing() {
        var generator = SplitMix64(seed: 11)
        let retries = StoreFailures.unknownSigningKey.limit - 1
        let span = (1...retries).map { RetryPolicy().delay(afterAttempt: $0, retryAfter: nil, using: &generator) }
            .reduce(Duration.zero, +)
        #expect(span > GoogleKeyCache.unknownKeyRefetchInterval, "\(span)")
    }

    /// Google's token endpoint is reached the same way: its failed handshakes are bounded too.
    @Test func aFailedHandshakeWithGooglesTokenEndpointIsBounded() {
        let error = GooglePlayAPIError(.tokenUnavailable, Self.curlMessage, transport: .tlsHandshake)
        #expect(StoreFailures.api(error, previous: Self.after(4, StoreFailures.handshake, error.description)).code == .retryable)
        #expect(StoreFailures.api(error, previous: Self.after(5, StoreFailures.handshake, error.description)).code == .permanent)
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
        for previous in [nil, "App Store API server error: HTTP 503"] as [String?] {
            let failure = StoreFailures.api(error, previous: previous)
            #expect(failure.code == expected, "\(status) after \(previous ?? "nothing"): \(failure)")
            #expect(failure.message.hasPrefix(error.description), "\(failure)")
            #expect(StoreFailures.isPermissionDenied(error) == [401, 403].contains(status))
            if StoreFailures.isPermissionDenied(error) {
                #expect(failure.retryAfter == StoreFailures.permissionRetryInterval)
                #expect(failure.message.contains("Play Console"), "\(failure)")
            }
        }
    }

    /// With the queue's default policy and attempts, a refused service account keeps being retried for at least the
    /// 48 hours Google's permission changes can take, whatever the jitter (the 2 h hint is its floor).
    @Test(arguments: 1...8 as ClosedRange<UInt64>)
    func permissionRetriesSpanTwoDays(seed: UInt64) {
        let policy = RetryPolicy()
        let failure = StoreFailures.api(Self.google(403, reason: "permissionDenied"), previous: nil)
        let retries = 25 - 1  // jobs.max_attempts defaults to 25 (sql/V0001__queue.sql)
        var generator = SplitMix64(seed: seed)
        let span = (1...retries).map { policy.delay(afterAttempt: $0, retryAfter: failure.retryAfter, using: &generator) }
            .reduce(Duration.zero, +)
        #expect(span >= .seconds(48 * 3600), "\(span)")
        #expect(span <= .seconds(54 * 3600), "\(span)")
    }
}
