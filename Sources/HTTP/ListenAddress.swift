import Foundation

/// Where a server listens, read from the `HOST:PORT` text operators write: an IPv4 address or a host name, or
/// an IPv6 address in brackets as in URLs (`[::1]:8080`, `[::]:8080`).
///
/// Brackets are the only way to tell an IPv6 address's colons from the port's (`::1:80` could be `::1` port
/// 80 or `::1:80` with no port), so a bare IPv6 address is refused rather than guessed at, and brackets never
/// reach the resolver, which cannot read them.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address or name to bind, an IPv6 address without its brackets: what `HTTPServerConfiguration.host`
    /// takes.
    public let host: String
    /// 0 lets the kernel choose a free port.
    public let port: UInt16

    /// `HOST:PORT` as operators write it, an IPv6 address in brackets again.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The longest text read: a 253-byte host name with `:65535`, with room to spare for brackets.
    static let maxLength = 300

    /// Throws `HTTPServerError` (`.invalidAddress`) whose message says what is wrong, without repeating `text`.
    public init(parsing text: String) throws(HTTPServerError) {
        guard !text.isEmpty, text.utf8.count <= Self.maxLength else {
            throw Self.invalid(text.isEmpty ? "it is empty" : "it is longer than \(Self.maxLength) bytes")
        }
        let hostText: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw Self.invalid("the bracket opening the IPv6 address is never closed")
            }
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else {
                throw Self.invalid("the bracketed IPv6 address must be followed by :PORT")
            }
            hostText = text[text.index(after: text.startIndex)..<close]
            portText = rest.dropFirst()
            guard Self.isIPv6Address(hostText) else {
                throw Self.invalid("\(String(hostText).debugDescription) in brackets is not an IPv6 address")
            }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw Self.invalid("there is no :PORT") }
            hostText = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !hostText.contains(":") else {
                throw Self.invalid("an IPv6 address must be written in brackets, e.g. [::1]:8080 or [::]:8080")
            }
            guard !hostText.isEmpty else {
                throw Self.invalid("the host is missing (0.0.0.0 listens on every IPv4 address, [::] on every address)")
            }
            guard hostText.utf8.count <= 253, hostText.utf8.allSatisfy(Self.isHostNameByte) else {
                throw Self.invalid("the host must be an IPv4 address, a host name (letters, digits, dots and hyphens, "
                                   + "at most 253) or an IPv6 address in brackets")
            }
        }
        guard (1...5).contains(portText.utf8.count), portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let port = UInt16(portText) else {
            throw Self.invalid("the port must be a number from 0 to 65535, got \(String(portText).debugDescription)")
        }
        host = String(hostText)
        self.port = port
    }

    private static func invalid(_ reason: String) -> HTTPServerError {
        HTTPServerError(.invalidAddress, reason)
    }

    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte)
            || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
    }

    /// A numeric IPv6 address, as the kernel reads one (no zone index: `%eth0` is not part of it).
    private static func isIPv6Address(_ text: Substring) -> Bool {
        IPAddressRange.bytes(of: String(text)).map { !$0.1 } ?? false
    }
}
