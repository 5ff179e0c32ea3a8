import HTTP
import Testing

/// `HOST:PORT` as operators write it: IPv6 addresses only in brackets, which never reach the resolver, and
/// every malformed form refused with the reason.
@Suite struct ListenAddressTests {
    static let notAHost = "the host must be an IPv4 address, a host name (letters, digits, dots and hyphens, "
        + "at most 253) or an IPv6 address in brackets"

    @Test(arguments: [
        ("0.0.0.0:8080", "0.0.0.0", 8080),
        ("127.0.0.1:65535", "127.0.0.1", 65535),
        ("localhost:9464", "localhost", 9464),
        ("Metrics-1.internal:0", "Metrics-1.internal", 0),
        ("[::]:8080", "::", 8080),
        ("[::1]:0", "::1", 0),
        ("[2001:db8::17]:443", "2001:db8::17", 443),
        ("[::ffff:127.0.0.1]:80", "::ffff:127.0.0.1", 80),
    ] as [(String, String, UInt16)])
    func reads(text: String, host: String, port: UInt16) throws {
        let address = try ListenAddress(parsing: text)
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.description == text, "written back as read")
    }

    @Test(arguments: [
        ("", "it is empty"),
        (String(repeating: "a", count: 298) + ":80", "it is longer than 300 bytes"),
        ("[::1", "the bracket opening the IPv6 address is never closed"),
        ("[::1]", "the bracketed IPv6 address must be followed by :PORT"),
        ("[::1]8080", "the bracketed IPv6 address must be followed by :PORT"),
        ("[::1]]:80", "the bracketed IPv6 address must be followed by :PORT"),
        ("[]:80", "\"\" in brackets is not an IPv6 address"),
        ("[127.0.0.1]:80", #""127.0.0.1" in brackets is not an IPv6 address"#),
        ("[fe80::1%eth0]:80", #""fe80::1%eth0" in brackets is not an IPv6 address"#),
        ("::1:80", "an IPv6 address must be written in brackets, e.g. [::1]:8080 or [::]:8080"),
        ("::1", "an IPv6 address must be written in brackets, e.g. [::1]:8080 or [::]:8080"),
        ("localhost", "there is no :PORT"),
        (":8080", "the host is missing (0.0.0.0 listens on every IPv4 address, [::] on every address)"),
        ("bad_host:80", Self.notAHost),
        ("0.0.0.0]:80", Self.notAHost),
        ("localhost:", #"the port must be a number from 0 to 65535, got """#),
        ("[::1]:", #"the port must be a number from 0 to 65535, got """#),
        ("localhost:65536", #"the port must be a number from 0 to 65535, got "65536""#),
        ("localhost:+80", #"the port must be a number from 0 to 65535, got "+80""#),
        ("localhost:000080", #"the port must be a number from 0 to 65535, got "000080""#),
        ("[::1]:http", #"the port must be a number from 0 to 65535, got "http""#),
    ])
    func refuses(text: String, reason: String) {
        let error = #expect(throws: HTTPServerError.self) { try ListenAddress(parsing: text) }
        #expect(error?.code == .invalidAddress)
        #expect(error?.message == reason)
    }
}
