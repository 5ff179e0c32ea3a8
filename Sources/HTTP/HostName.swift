/// A DNS host name as tenants' webhook domains are written: what `storesync accounts add --host` stores and
/// what a request's `Host` header is matched against, so one rule decides both.
public enum HostName {
    /// `text` lowercased when it is a host name — dot-separated labels of 1…63 ASCII letters, digits and
    /// hyphens, none starting or ending with a hyphen, 253 bytes in all — else nil. The bytes are checked
    /// before lowercasing, so a character that only folds to ASCII (the Kelvin sign to `k`) is refused.
    public static func normalized(_ text: Substring) -> String? {
        guard text.utf8.count <= 253 else { return nil }
        let isLabel: (Substring) -> Bool = { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { byte in
                    byte == 0x2d || (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                }
        }
        guard text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isLabel) else { return nil }
        return text.lowercased()
    }

    /// The account's host from a `Host` header, in the form `accounts add` stores: without the port, without the
    /// one trailing dot of a fully qualified name (`billing.example.com.` is the same host, RFC 3986 §3.2.2, and
    /// some senders write it so), lowercase; nil when what remains is not a `HostName` — so `..`, a lone `.` and
    /// an IPv6 literal are malformed, not unknown hosts.
    public static func fromHeader(_ value: String?) -> String? {
        guard let value = value?.trimmingHTTPWhitespace, !value.isEmpty, value.utf8.count <= 253 + 1 + 6
        else { return nil }
        var host = Substring(value)
        if let colon = host.lastIndex(of: ":") {
            let port = host[host.index(after: colon)...]
            guard port.utf8.count <= 5, port.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            host = host[..<colon]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        return HostName.normalized(host)
    }
}
