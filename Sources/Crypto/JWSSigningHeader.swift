import Foundation

/// A JWS protected header, encoded once. A signer that signs many payloads under the same key and chain —
/// the local App Store puts the same three-certificate `x5c` on every payload — pays for the DER, base64
/// and base64url of its kilobytes once instead of on every signature.
///
/// The JSON is written by hand, keys in sorted order and slashes unescaped: Foundation's `JSONSerialization`
/// escapes an `x5c` chain one character at a time on Linux.
public struct JWSSigningHeader: Sendable {
    public let algorithm: SignatureAlgorithm
    /// The header's base64url segment, the first part of every token signed under it.
    let encoded: String

    public init(algorithm: SignatureAlgorithm, kid: String? = nil, typ: String? = nil, x5c: [Certificate]? = nil) {
        var header = #"{"alg":"# + Self.jsonString(algorithm.rawValue)
        if let kid { header += #","kid":"# + Self.jsonString(kid) }
        if let typ { header += #","typ":"# + Self.jsonString(typ) }
        if let x5c {
            // Standard base64 needs no JSON escaping.
            header += #","x5c":["# + x5c.map { "\"\($0.der.base64EncodedString())\"" }.joined(separator: ",") + "]"
        }
        header += "}"
        self.algorithm = algorithm
        encoded = Base64URL.encode(header.utf8)
    }

    /// `value` as a JSON string (RFC 8259 §7), escaped on UTF-8 bytes: every escaped byte is ASCII, so
    /// never part of a multi-byte sequence.
    private static func jsonString(_ value: String) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}
