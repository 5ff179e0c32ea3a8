import AppStore
import GooglePlay
import HTTP
import Queue
@testable import Sync
import Testing

/// How a store call that got no response becomes the queue's decision: a failed TLS handshake is retried only
/// `handshakeAttempts` times (an https URL at a plain-HTTP port never succeeds), then dead-letters with
/// libcurl's reason; transient transport failures keep retrying; trust failures dead-letter at once.
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
}
