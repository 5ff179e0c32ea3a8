import Foundation
import Logging

/// A request as the server's handlers see it: fully received and detached from libmicrohttpd, so a handler
/// can keep it across suspension points and hand it to other tasks.
public struct HTTPRequest: Sendable {
    public let method: String
    /// The percent-decoded path, without the query.
    public let path: String
    /// The raw query string after `?`, still percent-encoded; `nil` when the target had no `?`.
    public let query: String?
    /// Header names are lowercased so lookups need no case folding; order and repeats are kept as sent.
    public let headers: [(name: String, value: String)]
    public let body: Data
    /// The IP address of the connection's peer (IPv4-mapped addresses as IPv4), for limits kept per address;
    /// behind a proxy it is the proxy's. `nil` when the server could not tell.
    public let peerAddress: String?

    public init(method: String, path: String, query: String? = nil, headers: [(name: String, value: String)] = [],
                body: Data = Data(), peerAddress: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers.map { (name: $0.name.lowercased(), value: $0.value) }
        self.body = body
        self.peerAddress = peerAddress
    }

    /// The first value of header `name`, matched case-insensitively (HTTP field names are case-insensitive).
    public func header(_ name: String) -> String? {
        firstHeader(name, in: headers)
    }
}

/// What a handler answers. `Content-Length` is computed by the server; setting it here has no effect.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A UTF-8 plain-text response, for errors and probes that humans read.
    public static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "text/plain; charset=utf-8")], body: Data(text.utf8))
    }

    /// A JSON response; `json` must already be serialized.
    public static func json(_ status: Int, _ json: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "application/json")], body: Data(json.utf8))
    }

    /// A refusal as every endpoint of the server words it, `{"error": message}`: clients parse one shape
    /// whichever layer refused them (the server itself, a webhook, a probe).
    public static func error(_ status: Int, _ message: String) -> HTTPResponse {
        json(status, #"{"error":"# + JSON.quoted(message) + "}")
    }
}

/// Answers one request. Runs as a Swift task, never on libmicrohttpd's thread, so it may await anything.
public typealias HTTPHandler = @Sendable (HTTPRequest) async -> HTTPResponse

/// Header lookup shared by requests and client responses, whose names are stored lowercased.
func firstHeader(_ name: String, in headers: [(name: String, value: String)]) -> String? {
    let wanted = name.lowercased()
    return headers.first { $0.name == wanted }?.value
}
