import Foundation
import HTTP
import TestSupport
import Testing

/// What anyone holding a phone can send the app endpoints: every malformed, oversized or hostile request gets a
/// clear 4xx in the reference's shape, nothing of it is stored, and the right pair's requests go on being answered.
@Suite struct AppBadInputTests {
    static let path = ClientPurchaseTests.path

    /// Bodies the endpoint refuses before it asks any store, each with its status and the start of its message.
    @Test func everyMalformedBodyIsAClear4xxAndStoresNothing() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let nested = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
            let cases: [(String, Data, String?, Int, String)] = [
                ("truncated", Data(#"{"store":"apple","transaction_id":"1"#.utf8), "application/json", 400, "Malformed JSON"),
                ("not UTF-8", Data([0x7b, 0x22, 0x73, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), "application/json", 400,
                 "Malformed JSON"),
                ("a repeated key", Data(#"{"store":"apple","store":"google_play","transaction_id":"1"}"#.utf8),
                 "application/json", 400, #"Malformed JSON: the key "store" appears twice."#),
                ("deeply nested", Data(#"{"store":"apple","transaction_id":"1","x":\#(nested)}"#.utf8), "application/json",
                 400, "Malformed JSON"),
                ("an array", Data(#"[{"store":"apple"}]"#.utf8), "application/json", 400,
                 "The request body must be a JSON object."),
                ("a form", Data("store=apple&transaction_id=1".utf8), "application/x-www-form-urlencoded", 415,
                 "Content-Type must be application/json."),
                ("no content type", Data(#"{"store":"apple","transaction_id":"1"}"#.utf8), nil, 415,
                 "Content-Type must be application/json."),
                ("a number for the id", Data(#"{"store":"apple","transaction_id":2000000000000001}"#.utf8), "application/json",
                 422, "transaction_id must be a string"),
                ("oversized", Data(("{\"store\":\"apple\",\"transaction_id\":\"1\",\"pad\":\"" + String(repeating: "a", count: 20_000)
                                    + "\"}").utf8), "application/json", 413, "Request body too large"),
            ]
            let before = try await api.traces()
            for (name, body, type, status, message) in cases {
                var headers = pair.headers
                if let type { headers.append(("Content-Type", type)) }
                let answer = try await api.sendRaw("POST", Self.path, body: body, headers: headers)
                #expect(answer.status == status, "\(name): \(answer.text)")
                #expect(answer.header("content-type")?.hasPrefix("application/json") == true, "\(name)")
                #expect(try (answer.json["message"] as? String)?.hasPrefix(message) == true, "\(name): \(answer.text)")
                #expect(try answer.json["status"] as? Bool == false, "\(name)")
            }
            #expect(try await api.traces() == before)
            #expect(try await api.sendAsApp("GET", "/api/v1/mobile-stores/client/entitlements", pair: pair).status == 200)
        }
    }

    /// A secret header whose value tries to end the line and add the right secret behind a wrong one (a bare CR,
    /// CRLF, a NUL — bytes no well-behaved client sends, so they go raw): the first value decides, nothing is
    /// smuggled into the answer, and the pair does not authenticate.
    @Test func aHeaderInjectionAuthenticatesNothing() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let port = try #require(UInt16(api.baseURL.split(separator: ":").last ?? ""))
            for separator in ["\r", "\r\n", "\u{0}"] {
                let connection = try RawConnection(port: port)
                connection.write("GET /api/v1/mobile-stores/client/entitlements HTTP/1.1\r\nHost: \(APIHarness.host)\r\n"
                    + "Connection: close\r\nX-SF-Account-Token: \(pair.token)\r\n"
                    + "X-SF-Client-Secret: wrong\(separator)X-SF-Client-Secret: \(pair.secret)\r\n\r\n")
                let answer = try #require(connection.readUntilClose(within: .seconds(10)),
                                          "no answer with \(separator.debugDescription)")
                let statusLine = answer.prefix { $0 != "\r" }
                #expect(statusLine.hasPrefix("HTTP/1.1 4"), "\(separator.debugDescription): \(answer.prefix(300))")
                #expect(!answer.lowercased().contains("x-sf-client-secret"), "\(separator.debugDescription)")
                if statusLine.hasPrefix("HTTP/1.1 401") { #expect(answer.hasSuffix(AppAuthenticationTests.invalid)) }
            }
            #expect(try await api.sendAsApp("GET", "/api/v1/mobile-stores/client/entitlements", pair: pair).status == 200)
        }
    }

    /// A thousand wrong secrets from one address: the first ones (the address's failure budget) answer 401, the
    /// rest 429; they store nothing but the address's count, and the right pair, from the same address at the
    /// same time, is answered throughout.
    @Test func aThousandWrongSecretsFromOneAddressAreLimitedThereAlone() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let before = try await api.traces()
            let path = "/api/v1/mobile-stores/client/entitlements"
            let (wrong, right) = try await withThrowingTaskGroup(of: (wrong: [Int], right: [Int]).self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var statuses: (wrong: [Int], right: [Int]) = ([], [])
                        for attempt in 0..<125 {
                            let guess = APIHarness.AppPair(customerID: pair.customerID, token: pair.token,
                                                           secret: "guess-\(worker)-\(attempt)")
                            statuses.wrong.append(try await api.sendAsApp("GET", path, pair: guess).status)
                            if attempt % 25 == 0 { statuses.right.append(try await api.sendAsApp("GET", path, pair: pair).status) }
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: ([Int](), [Int]())) { $0.0 += $1.wrong; $0.1 += $1.right }
            }
            #expect(wrong.count == 1000)
            #expect(wrong.filter { $0 == 401 }.count == 60, "the default failure budget of one address")
            #expect(wrong.filter { $0 == 429 }.count == 940)
            #expect(right == Array(repeating: 200, count: 40), "the right pair is never limited by the junk")
            #expect(try await api.traces() == before)
            #expect(try await api.scalar("SELECT hits FROM api_rate_windows WHERE bucket = 'app-address:127.0.0.1'",
                                         as: Int.self) == 1000)
            #expect(try await api.scalar("SELECT hits FROM api_rate_windows WHERE bucket = $1", ["app-token:" + pair.token],
                                         as: Int.self) == 40)
        }
    }
}
