/// Percent-encoding for query strings and form bodies: every byte but RFC 3986's unreserved ones, so an opaque
/// value (a page token, a revision, an assertion) can never add a parameter or end the string early. Shared by
/// the App Store and Play clients.
public enum PercentEncoding {
    public static func encode(_ value: String) -> String {
        var encoded = ""
        for byte in value.utf8 {
            if unreserved.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    /// `application/x-www-form-urlencoded` from name–value pairs, in order.
    public static func form(_ fields: [(String, String)]) -> String {
        fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    /// The name–value pairs of an `application/x-www-form-urlencoded` body (WHATWG URL §5.1: `+` is a space,
    /// `%XX` a byte), in order and with repeats kept, so the caller can refuse a repeated parameter as OAuth
    /// requires. Nil when an escape is malformed or a name or value is not UTF-8.
    public static func decodeForm(_ body: some Collection<UInt8>) -> [(name: String, value: String)]? {
        var fields: [(name: String, value: String)] = []
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { return nil }
            fields.append((name, value))
        }
        return fields
    }

    /// One form-encoded component, or nil when an escape is malformed or the bytes are not UTF-8. Byte by
    /// byte, and a component without escapes is copied whole: Foundation's `removingPercentEncoding` went
    /// through CFString on every call.
    public static func decode(_ component: some Collection<UInt8>) -> String? {
        guard component.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(validating: component, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.count)
        var iterator = component.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// ASCII letters and digits, the core of every identifier alphabet the store clients accept.
    public static let alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    private static let unreserved = Set((alphanumerics + "-._~").utf8)
}
