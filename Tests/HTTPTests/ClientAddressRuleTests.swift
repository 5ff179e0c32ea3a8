import HTTP
import Testing

/// Which address a request is from: CIDR ranges as operators write them, and `X-Forwarded-For` believed only
/// from the proxies they trust.
@Suite struct ClientAddressRuleTests {
    @Test(arguments: [
        ("10.0.0.0/8", "10.200.3.4", true),
        ("10.0.0.0/8", "11.0.0.1", false),
        ("192.168.1.7", "192.168.1.7", true),
        ("192.168.1.7", "192.168.1.8", false),
        ("0.0.0.0/0", "203.0.113.9", true),
        ("10.0.0.0/8", "::ffff:10.1.2.3", true),
        ("fd00::/8", "fd12:3456::1", true),
        ("fd00::/8", "fe80::1", false),
        ("2001:db8::/127", "2001:db8::1", true),
        ("2001:db8::/128", "2001:db8::1", false),
        ("10.0.0.0/8", "not an address", false),
    ])
    func aRangeHoldsTheAddressesOfItsPrefix(range: String, address: String, holds: Bool) throws {
        #expect(try #require(IPAddressRange(range)).contains(address) == holds)
    }

    @Test(arguments: ["", "10.0.0.0/33", "10.0.0.0/-1", "fd00::/129", "10.0.0/8", "example.com", "10.0.0.0/8/8", "1.2.3.4/ 8"])
    func aMalformedRangeIsRefused(text: String) {
        #expect(IPAddressRange(text) == nil)
    }

    @Test func configurationTextListsRangesByCommaOrSpace() throws {
        let rule = try #require(ClientAddressRule(parsing: "10.0.0.0/8, fd00::/8 127.0.0.1"))
        #expect(rule.trustedProxies.map(\.description) == ["10.0.0.0/8", "fd00::/8", "127.0.0.1"])
        #expect(ClientAddressRule(parsing: "10.0.0.0/8,nope") == nil)
        #expect(try #require(ClientAddressRule(parsing: "")).trustedProxies.isEmpty)
    }

    /// The table of who the client is: peer, forwarded entries (as sent, several headers joined), trusted ranges.
    @Test(arguments: [
        ("198.51.100.1", ["203.0.113.5"], [], "198.51.100.1"),  // nobody trusted: the header is anyone's to write
        ("10.0.0.2", ["203.0.113.5"], ["10.0.0.0/8"], "203.0.113.5"),
        ("10.0.0.2", ["1.1.1.1, 203.0.113.5, 10.0.0.9"], ["10.0.0.0/8"], "203.0.113.5"),  // the right-most untrusted
        ("10.0.0.2", ["1.1.1.1", "203.0.113.5"], ["10.0.0.0/8"], "203.0.113.5"),
        ("198.51.100.1", ["203.0.113.5"], ["10.0.0.0/8"], "198.51.100.1"),  // an untrusted peer's header is ignored
        ("10.0.0.2", [], ["10.0.0.0/8"], "10.0.0.2"),
        ("10.0.0.2", ["garbage"], ["10.0.0.0/8"], "10.0.0.2"),  // an entry that is no address stops the walk
        ("10.0.0.2", ["10.0.0.7"], ["10.0.0.0/8"], "10.0.0.2"),  // every hop trusted: the peer
        ("10.0.0.2", ["2001:db8::5"], ["10.0.0.0/8"], "2001:db8::5"),
    ])
    func theClientIsTheRightMostUntrustedHop(peer: String, forwarded: [String], trusted: [String], client: String) throws {
        let rule = ClientAddressRule(trustedProxies: try trusted.map { try #require(IPAddressRange($0)) })
        let request = HTTPRequest(method: "GET", path: "/", headers: forwarded.map { ("X-Forwarded-For", $0) },
                                  peerAddress: peer)
        #expect(rule.clientAddress(of: request) == client)
    }
}
