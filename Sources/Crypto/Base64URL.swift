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

    /// Appends character by character: an array literal per three bytes allocated, and encoding was a
    /// sizeable share of what the local App Store simulator spends signing payloads.
    public static func encode(_ data: some Sequence<UInt8>) -> String {
        let bytes = Array(data)
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
            out.append(alphabet[Int(chunk & 63)])
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
        if let decoded = try input.withContiguousStorageIfAvailable({ try decode(buffer: $0) }) { return decoded }
        return try Array(input).withUnsafeBufferPointer { try decode(buffer: $0) }
    }

    /// Decodes four characters into three bytes per step; tokens are decoded on every notification.
    private static func decode(buffer input: UnsafeBufferPointer<UInt8>) throws -> Data {
        let outputCount = input.count / 4 * 3 + max(0, input.count % 4 - 1)
        var failure: CryptoError?
        let bytes = [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
            values.withUnsafeBufferPointer { table in
                var accumulator: UInt32 = 0
                var out = 0
                var index = 0
                let whole = input.count & ~3
                while index < whole {
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                    let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
                    if (a | b | c | d) == 0xff {
                        failure = invalid(input[index..<(index + 4)])
                        return
                    }
                    accumulator = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    output[out] = UInt8(truncatingIfNeeded: accumulator >> 16)
                    output[out + 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                    output[out + 2] = UInt8(truncatingIfNeeded: accumulator)
                    out += 3
                    index += 4
                }
                accumulator = 0
                var bits = 0
                while index < input.count {
                    let value = table[Int(input[index])]
                    if value == 0xff {
                        failure = invalid(input[index...index])
                        return
                    }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        output[out] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                        out += 1
                        accumulator &= (1 << UInt32(bits)) - 1
                    }
                    index += 1
                }
                if accumulator != 0 { failure = CryptoError(.invalidEncoding, "base64url has non-zero trailing bits") }
                initialized = out
            }
            if failure != nil { initialized = 0 }
        }
        if let failure { throw failure }
        return Data(bytes)
    }

    private static func invalid(_ characters: Slice<UnsafeBufferPointer<UInt8>>) -> CryptoError {
        characters.contains(UInt8(ascii: "="))
            ? CryptoError(.invalidEncoding, "base64url must not be padded")
            : CryptoError(.invalidEncoding, "invalid base64url character")
    }
}
