import Foundation
import HTTP
import Testing

@Suite struct HTTPRetryTests {
    /// 2015-10-21 07:28:00 UTC, the instant the date-form cases are measured from.
    static let now = Date(timeIntervalSince1970: 1_445_412_480)

    static func response(_ status: Int, retryAfter: String? = nil) -> Result<HTTPClientResponse, any Error> {
        .success(HTTPClientResponse(status: status, headers: retryAfter.map { [("Retry-After", $0)] } ?? []))
    }

    static func failure(_ code: HTTPClientError.Code) -> Result<HTTPClientResponse, any Error> {
        .failure(HTTPClientError(code, "test"))
    }

    static let cases: [(String, Result<HTTPClientResponse, any Error>, HTTPRetry?)] = [
        ("200", response(200), nil),
        ("204", response(204), nil),
        ("304", response(304), nil),
        ("429 with seconds", response(429, retryAfter: "120"), .retryable(after: .seconds(120))),
        ("429 with IMF-fixdate", response(429, retryAfter: "Wed, 21 Oct 2015 07:28:30 GMT"), .retryable(after: .seconds(30))),
        ("429 with RFC 850 date", response(429, retryAfter: "Wednesday, 21-Oct-15 07:29:00 GMT"),
         .retryable(after: .seconds(60))),
        ("429 with asctime date", response(429, retryAfter: "Wed Oct 21 07:28:05 2015"), .retryable(after: .seconds(5))),
        ("429 with a past date", response(429, retryAfter: "Wed, 21 Oct 2015 07:00:00 GMT"), .retryable(after: .zero)),
        ("429 with garbage", response(429, retryAfter: "soon"), .retryable(after: nil)),
        ("429 without Retry-After", response(429), .retryable(after: nil)),
        ("503 with seconds", response(503, retryAfter: "7"), .retryable(after: .seconds(7))),
        ("503", response(503), .retryable(after: nil)),
        ("500", response(500), .retryable(after: nil)),
        ("502", response(502), .retryable(after: nil)),
        ("408", response(408), .retryable(after: nil)),
        ("404", response(404), .permanent),
        ("400", response(400), .permanent),
        ("401", response(401), .permanent),
        ("timeout", failure(.timeout), .retryable(after: nil)),
        ("connection refused", failure(.connectionRefused), .retryable(after: nil)),
        ("connection reset", failure(.connectionReset), .retryable(after: nil)),
        ("dns", failure(.dns), .retryable(after: nil)),
        ("tls", failure(.tls), .permanent),
        ("body too large", failure(.bodyTooLarge), .permanent),
        ("invalid request", failure(.invalidRequest), .permanent),
        ("shutdown", failure(.shutdown), .permanent),
        ("cancelled", .failure(CancellationError()), .permanent),
    ]

    @Test(arguments: cases.indices)
    func classify(_ index: Int) {
        let (name, result, expected) = Self.cases[index]
        #expect(HTTPRetry.classify(result, now: Self.now) == expected, "\(name)")
    }
}
