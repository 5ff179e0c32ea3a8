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
}
