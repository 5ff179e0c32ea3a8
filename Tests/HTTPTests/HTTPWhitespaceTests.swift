import HTTP
import Testing

@Suite struct HTTPWhitespaceTests {
    @Test("trimming drops spaces, tabs, CR and LF at both ends only", arguments: [
        ("", ""), ("   ", ""), ("a", "a"), (" \t value \r\n", "value"), ("in ner", "in ner"),
        ("\u{a0}x\u{a0}", "\u{a0}x\u{a0}"), (" é ", "é"),
    ])
    func trims(_ input: String, _ expected: String) {
        #expect(input.trimmingHTTPWhitespace == expected)
        #expect(input[...].trimmingHTTPWhitespace == expected)
    }
}
