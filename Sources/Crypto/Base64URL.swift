import Foundation

/// Base64url as JWS uses it (RFC 7515 §2): URL-safe alphabet and no padding. Decoding is strict: padding,
/// characters outside the alphabet, an impossible length or non-zero leftover bits are all rejected, so
/// every byte string has exactly one accepted encoding.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    public static func encode(_ data: some Sequence<UInt8>) -> String {
        let bytes = Array(data)
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(chunk >> 18 & 63)], alphabet[Int(chunk >> 12 & 63)],
                    alphabet[Int(chunk >> 6 & 63)], alphabet[Int(chunk & 63)]]
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let chunk = UInt32(bytes[index]) << 16
            out += [alphabet[Int(chunk >> 18 & 63)], alphabet[Int(chunk >> 12 & 63)]]
        case 2:
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(chunk >> 18 & 63)], alphabet[Int(chunk >> 12 & 63)], alphabet[Int(chunk >> 6 & 63)]]
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: some StringProtocol) throws -> Data {
        try decode(utf8: Array(text.utf8))
    }

    public static func decode(utf8 input: some Collection<UInt8>) throws -> Data {
        guard input.count % 4 != 1 else {
            throw CryptoError(.invalidEncoding, "base64url text of length \(input.count) is impossible")
        }
        var out = [UInt8]()
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        let values = Self.values
        for character in input {
            let value = values[Int(character)]
            guard value != 0xff else {
                throw CryptoError(.invalidEncoding,
                                  character == UInt8(ascii: "=") ? "base64url must not be padded" : "invalid base64url character")
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard accumulator == 0 else { throw CryptoError(.invalidEncoding, "base64url has non-zero trailing bits") }
        return Data(out)
    }
}
