import Foundation
import HTTP
import TestSupport
import Testing

/// Every answer under the API's paths is JSON in the reference's shape, `{"status": false, "message": …}`,
/// whichever layer refuses: the API's router (unknown paths, wrong methods), the body reader (content type,
/// malformed JSON, a body that is not an object) and the server itself (a body over the limit).
@Suite struct ErrorShapeTests {
    static let prefix = "/api/v1/mobile-stores"
    static let customer = "7d0c6d0e-0000-4000-8000-000000000000"

    /// The reference's error shape with no field errors: `status` false and a message, nothing else.
    static func expectRefusal(_ answer: APIHarness.Answer, _ status: Int, message: String? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(answer.status == status, "\(answer.text)", sourceLocation: sourceLocation)
        #expect(answer.header("content-type") == "application/json", sourceLocation: sourceLocation)
        let json = try answer.json
        #expect(Set(json.keys) == ["status", "message"], "\(answer.text)", sourceLocation: sourceLocation)
        #expect(json["status"] as? Bool == false, "\(answer.text)", sourceLocation: sourceLocation)
        let text = json["message"] as? String
        #expect(text?.isEmpty == false, "\(answer.text)", sourceLocation: sourceLocation)
        if let message { #expect(text == message, sourceLocation: sourceLocation) }
    }

    /// A request with headers and a body exactly as given (the harness's `send` always says the body is JSON).
    static func raw(_ api: APIHarness, _ method: String, _ path: String, headers: [(name: String, value: String)],
                    body: Data?) async throws -> APIHarness.Answer {
        let client = try HTTPClient()
        let response: HTTPClientResponse
        do {
            response = try await client.send(HTTPClientRequest(method: method, url: api.baseURL + path,
                                                               headers: [("Host", APIHarness.host)] + headers, body: body))
        } catch {
            await client.shutdown()
            throw error
        }
        await client.shutdown()
        return APIHarness.Answer(status: response.status, headers: response.headers, body: response.body)
    }

    /// Unknown paths under the prefix are the API's to answer, authenticated or not; so is the prefix itself and
    /// an empty path parameter.
    @Test(arguments: ["/nope", "/", "", "/customers", "/customers//entitlements", "/purchases/", "/account-tokens/a/b",
                      "/client/subscriptions", "/customers/\(customer)/consumption-usage/", "/openapi.yaml"])
    func anUnknownPathIsNotFound(suffix: String) async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            for token in [nil, bearer] {
                let answer = try await api.send("GET", Self.prefix + suffix, bearer: token)
                try Self.expectRefusal(answer, 404, message: "Not found.")
            }
        }
    }

    /// A known path with another method is 405 with the path's methods in `Allow` (`HEAD` wherever `GET` is).
    @Test(arguments: [
        ("PATCH", "/purchases", "POST"),
        ("GET", "/purchases", "POST"),
        ("OPTIONS", "/purchases", "POST"),
        ("PUT", "/account-tokens", "POST"),
        ("GET", "/account-tokens/\(customer)", "DELETE"),
        ("POST", "/customers/\(customer)/entitlements", "GET, HEAD"),
        ("DELETE", "/customers/\(customer)/consumption-usage/2000000000000001", "GET, HEAD, PUT"),
        ("POST", "/openapi.json", "GET, HEAD"),
    ])
    func aWrongMethodIsNotAllowedAndSaysWhichAre(method: String, suffix: String, allow: String) async throws {
        try await APIHarness.with { api in
            let answer = try await api.send(method, Self.prefix + suffix, bearer: try await api.accessToken())
            try Self.expectRefusal(answer, 405, message: "Method not allowed.")
            #expect(answer.header("allow") == allow)
        }
    }

    /// The token endpoint's path is the API's too: only its own answers are RFC 6749's.
    @Test func aWrongMethodOnTheTokenEndpointIsTheAPIs405() async throws {
        try await APIHarness.with { api in
            let answer = try await api.send("GET", "/oauth/token")
            try Self.expectRefusal(answer, 405, message: "Method not allowed.")
            #expect(answer.header("allow") == "POST")
        }
    }

    /// A method the API never routes is refused by the server before the API sees it; the refusal still takes
    /// the API's shape and must still name only the methods the path has.
    @Test func aMethodTheAPINeverRoutesIsStillTheAPIs405() async throws {
        try await APIHarness.with { api in
            let answer = try await api.send("PROPFIND", Self.prefix + "/purchases", bearer: try await api.accessToken())
            try Self.expectRefusal(answer, 405)
            #expect(answer.header("allow") == "POST", "\(answer.headers)")
        }
    }

    /// A body must be `application/json` (parameters and case aside); anything else is 415, and nothing is issued.
    @Test(arguments: ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", "text/json"])
    func aBodyOfAnotherTypeIsUnsupported(type: String) async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let answer = try await Self.raw(api, "POST", Self.prefix + "/account-tokens",
                                            headers: [("Content-Type", type), ("Authorization", "Bearer \(try await api.accessToken())")],
                                            body: Data(#"{"customer_id":"\#(customer)"}"#.utf8))
            try Self.expectRefusal(answer, 415, message: "Content-Type must be application/json.")
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens", as: Int.self) == 0)
        }
    }

    @Test(arguments: ["application/json; charset=utf-8", "Application/JSON", " application/json ;charset=UTF-8"])
    func jsonWithParametersOrInAnotherCaseIsAccepted(type: String) async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let answer = try await Self.raw(api, "POST", Self.prefix + "/account-tokens",
                                            headers: [("Content-Type", type), ("Authorization", "Bearer \(try await api.accessToken())")],
                                            body: Data(#"{"customer_id":"\#(customer)"}"#.utf8))
            #expect(answer.status == 201, "\(answer.text)")
        }
    }

    /// Not JSON, or JSON with anything after the document, is 400.
    @Test(arguments: ["{", #"{"customer_id":}"#, #"{"customer_id":"x",}"#, "{} {}", #"{'customer_id':'x'}"#,
                      #"{"customer_id":"\x"}"#, "   "])
    func malformedJSONIsABadRequest(body: String) async throws {
        try await APIHarness.with { api in
            let answer = try await api.send("POST", Self.prefix + "/account-tokens", json: body,
                                            bearer: try await api.accessToken())
            try Self.expectRefusal(answer, 400)
            #expect(try (answer.json["message"] as? String)?.hasPrefix("Malformed JSON") == true, "\(answer.text)")
        }
    }

    /// A body must be one JSON object: an array (even of the right fields), a string, a number or null is 400.
    @Test(arguments: ["[]", #"[{"customer_id":"C"}]"#, #""C""#, "42", "null", "true"])
    func aBodyThatIsNotAnObjectIsABadRequest(body: String) async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let answer = try await api.send("POST", Self.prefix + "/account-tokens",
                                            json: body.replacingOccurrences(of: "C", with: customer),
                                            bearer: try await api.accessToken())
            try Self.expectRefusal(answer, 400, message: "The request body must be a JSON object.")
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens", as: Int.self) == 0)
        }
    }

    /// The server refuses a body over its limit before any handler runs, in the API's shape; a body of exactly
    /// the limit is served.
    @Test func aBodyOverTheLimitIsTooLargeInTheAPIsShape() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            let fields = #"{"customer_id":"\#(customer)"}"#
            let exact = fields + String(repeating: " ", count: 16 * 1024 - fields.utf8.count)
            let served = try await api.send("POST", Self.prefix + "/account-tokens", json: exact, bearer: bearer)
            #expect(served.status == 201, "\(served.text)")
            for path in ["/account-tokens", "/purchases", "/nope"] {
                let answer = try await api.send("POST", Self.prefix + path, json: exact + " ", bearer: bearer)
                try Self.expectRefusal(answer, 413)
                #expect(try (answer.json["message"] as? String)?.contains("16384") == true, "\(answer.text)")
            }
            #expect(try await api.scalar("SELECT count(*) FROM account_tokens", as: Int.self) == 1)
        }
    }
}
