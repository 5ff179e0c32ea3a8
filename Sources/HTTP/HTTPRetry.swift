import Foundation

/// Retry classification the store API clients build on, so every client retries the same failures the
/// same way.
public enum HTTPRetry: Sendable, Equatable {
    /// Worth trying again; `after` is the server's `Retry-After` when it sent one (a negative wait, from a
    /// date in the past, is zero).
    case retryable(after: Duration?)
    /// Trying again will fail the same way (client errors, TLS trust, oversized bodies, cancellation).
    case permanent

    /// `nil` for success (2xx, and 3xx which the client does not follow). Retryable: timeouts, refused or
    /// reset connections, failed TLS handshakes (which may never succeed: bound how often they are retried),
    /// DNS failures, 408, 429 and 5xx — with `Retry-After` (delay-seconds or HTTP-date) for 429 and 5xx (503
    /// commonly sends it). Everything else is permanent.
    public static func classify(_ result: Result<HTTPClientResponse, any Error>, now: Date = Date()) -> HTTPRetry? {
        switch result {
        case .success(let response):
            switch response.status {
            case 200..<400: return nil
            case 408: return .retryable(after: nil)
            case 429, 500...599:
                return .retryable(after: response.header("retry-after").flatMap { retryAfter($0, now: now) })
            default: return .permanent
            }
        case .failure(let error as HTTPClientError):
            switch error.code {
            case .timeout, .connectionRefused, .connectionReset, .tlsHandshake, .dns: return .retryable(after: nil)
            default: return .permanent
            }
        case .failure: return .permanent
        }
    }

    /// RFC 9110 §10.2.3: delay-seconds or an HTTP-date (IMF-fixdate; the obsolete RFC 850 and asctime forms
    /// are accepted too, as recipients must).
    static func retryAfter(_ value: String, now: Date) -> Duration? {
        let value = value.trimmingHTTPWhitespace
        if let seconds = Int(value) { return seconds >= 0 ? .seconds(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: value) {
                return .milliseconds(max(0, Int((date.timeIntervalSince(now) * 1000).rounded(.up))))
            }
        }
        return nil
    }
}
