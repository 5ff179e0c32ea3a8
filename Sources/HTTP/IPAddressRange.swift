import Foundation

/// An IP network as operators write one in configuration — `10.0.0.0/8`, `fd00::/8`, or a single address —
/// matched against the addresses the server reports (`HTTPRequest.peerAddress`, `X-Forwarded-For` entries).
/// IPv4 addresses are compared as the IPv4-mapped IPv6 addresses the kernel may report them as.
public struct IPAddressRange: Sendable, Equatable, CustomStringConvertible {
    /// 16 bytes: IPv4 as `::ffff:a.b.c.d`.
    private let network: [UInt8]
    private let prefixLength: Int
    public let description: String

    /// Nil unless `text` is an address, or an address, `/` and a prefix length within its family's.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let (bytes, isIPv4) = Self.bytes(of: String(parts[0])) else { return nil }
        let familyBits = isIPv4 ? 32 : 128
        var length = familyBits
        if parts.count == 2 {
            guard let given = Int(parts[1]), parts[1].allSatisfy(\.isASCII), (0...familyBits).contains(given) else { return nil }
            length = given
        }
        prefixLength = length + (isIPv4 ? 96 : 0)
        network = Self.masked(bytes, prefixLength)
        description = text
    }

    /// Whether `address` (an address without prefix) lies in the range.
    public func contains(_ address: String) -> Bool {
        guard let (bytes, _) = Self.bytes(of: address) else { return false }
        return Self.masked(bytes, prefixLength) == network
    }

    /// The 16 bytes of an IPv4 or IPv6 address, and whether it was written as IPv4.
    static func bytes(of text: String) -> ([UInt8], Bool)? {
        guard (2...45).contains(text.utf8.count) else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let raw = withUnsafeBytes(of: v4.s_addr) { Array($0) }
            return (Array(repeating: 0, count: 10) + [0xff, 0xff] + raw, true)
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        return (withUnsafeBytes(of: v6) { Array($0) }, false)
    }

    private static func masked(_ bytes: [UInt8], _ prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = max(0, min(8, prefixLength - index * 8))
            return bits == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xff << (8 - bits))
        }
    }
}

/// Which address a request comes from, when proxies the operator trusts stand in front of the server: the
/// peer, unless the peer is one of them, in which case the right-most `X-Forwarded-For` entry that is not
/// one of them (each trusted proxy appends the address it received from). Headers from anyone else are
/// ignored, so a client cannot choose its own address by sending one.
public struct ClientAddressRule: Sendable {
    public let trustedProxies: [IPAddressRange]

    public init(trustedProxies: [IPAddressRange] = []) {
        self.trustedProxies = trustedProxies
    }

    /// Parses `STORESYNC_API_TRUSTED_PROXIES`-style text: ranges separated by commas or spaces.
    public init?(parsing text: String) {
        var ranges: [IPAddressRange] = []
        for item in text.split(whereSeparator: { $0 == "," || $0 == " " }) {
            guard let range = IPAddressRange(String(item)) else { return nil }
            ranges.append(range)
        }
        trustedProxies = ranges
    }

    public func clientAddress(of request: HTTPRequest) -> String? {
        guard let peer = request.peerAddress, isTrusted(peer) else { return request.peerAddress }
        let forwarded = request.headers.filter { $0.name == "x-forwarded-for" }.flatMap { $0.value.split(separator: ",") }
        for entry in forwarded.reversed().prefix(32) {
            let address = entry.trimmingHTTPWhitespace
            guard IPAddressRange.bytes(of: address) != nil else { return peer }
            if !isTrusted(address) { return address }
        }
        return peer
    }

    private func isTrusted(_ address: String) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }
}
