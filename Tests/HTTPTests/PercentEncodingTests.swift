import HTTP
import Testing

/// Opaque values (page tokens, revisions, assertions) must reach the store as one query value each.
@Suite struct PercentEncodingTests {
    @Test("every byte but RFC 3986's unreserved ones is escaped", arguments: [
        ("AZaz09-._~", "AZaz09-._~"),
        ("a b&c=d", "a%20b%26c%3Dd"),
        ("rev/+?#%", "rev%2F%2B%3F%23%25"),
        ("é", "%C3%A9"),
        ("", ""),
    ])
    func encode(_ value: String, _ expected: String) {
        #expect(PercentEncoding.encode(value) == expected)
    }

    @Test("a form keeps its fields in order, names and values escaped")
    func form() {
        #expect(PercentEncoding.form([("grant_type", "a:b"), ("x y", "1&2")]) == "grant_type=a%3Ab&x%20y=1%262")
    }
}
