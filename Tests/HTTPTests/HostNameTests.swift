import HTTP
import Testing

/// One rule for tenants' webhook domains, shared by `accounts add --host` and the `Host` header's match.
@Suite struct HostNameTests {
    @Test(arguments: [
        ("billing.example.com", "billing.example.com"), ("Billing.EXAMPLE.com", "billing.example.com"),
        ("localhost", "localhost"), ("a-b.c0", "a-b.c0"), ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        (String(repeating: "a", count: 63), String(repeating: "a", count: 63)),
        ("", nil), (".", nil), ("..", nil), ("a..b", nil), (".a", nil), ("a.", nil), ("-a", nil), ("a-", nil),
        ("a_b", nil), ("a b", nil), ("a:80", nil), ("[::1]", nil), ("bücher.example", nil),
        ("\u{212A}elvin.example", nil), ("ＡＢＣ.example", nil), (String(repeating: "a", count: 64), nil),
    ] as [(String, String?)])
    func normalized(text: String, expected: String?) {
        #expect(HostName.normalized(Substring(text)) == expected)
    }

    @Test func twoHundredFiftyThreeBytesInAllAtMost() {
        let longest = Array(repeating: String(repeating: "a", count: 63), count: 3).joined(separator: ".") + "."
            + String(repeating: "b", count: 61)
        #expect(longest.utf8.count == 253)
        #expect(HostName.normalized(Substring(longest)) == longest)
        #expect(HostName.normalized(Substring(longest + "b")) == nil)
    }

    /// A `Host` header as webhooks and the API read it: port and one trailing dot dropped, lowercased.
    @Test(arguments: [
        ("billing.example.com", "billing.example.com"), ("Billing.Example.COM:443", "billing.example.com"),
        ("  localhost:8080 ", "localhost"), ("", nil), ("bad host", nil), ("evil.com/path", nil), ("[::1]:80", nil),
        ("billing.example.com.", "billing.example.com"), ("Billing.Example.COM.:443", "billing.example.com"),
        ("billing.example.com:", "billing.example.com"), ("localhost.", "localhost"),
        ("billing.example.com..", nil), ("..", nil), (".", nil), (".:443", nil), (":443", nil),
        ("billing..example.com", nil), (".billing.example.com", nil), ("-billing.example.com", nil),
        ("billing-.example.com", nil), ("billing.example.com:8o", nil), ("billing.example.com:443443", nil),
        ("bïlling.example.com", nil), ("\u{212A}ing.example.com", nil),
        (String(repeating: "a", count: 63) + ".test", String(repeating: "a", count: 63) + ".test"),
        (String(repeating: "a", count: 64) + ".test", nil),
        (Array(repeating: String(repeating: "a", count: 49), count: 5).joined(separator: ".") + ".abc.:443",
         Array(repeating: String(repeating: "a", count: 49), count: 5).joined(separator: ".") + ".abc"),
        (Array(repeating: String(repeating: "a", count: 49), count: 5).joined(separator: ".") + ".abcd", nil),
    ] as [(String, String?)])
    func hostFromHeader(header: String, host: String?) {
        #expect(HostName.fromHeader(header) == host)
    }
}
