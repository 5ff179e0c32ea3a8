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

    /// ASCII letters and digits, the core of every identifier alphabet the store clients accept.
    public static let alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    private static let unreserved = Set((alphanumerics + "-._~").utf8)
}
