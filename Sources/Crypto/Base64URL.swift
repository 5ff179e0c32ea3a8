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

    /// Writes four characters per three bytes into one buffer, with the alphabet bound once (read through
    /// its lazy global, every character paid for the check): encoding is a sizeable share of what the local
    /// App Store simulator spends signing payloads.
    public static func encode(_ data: some Sequence<UInt8>) -> String {
        let bytes = Array(data)
        let fullGroups = bytes.count / 3, rest = bytes.count % 3
        let count = fullGroups * 4 + (rest == 0 ? 0 : rest + 1)
        return alphabet.withUnsafeBufferPointer { alphabet in
            bytes.withUnsafeBufferPointer { bytes in
                String(unsafeUninitializedCapacity: count) { out in
                    var index = 0, position = 0
                    func put(_ chunk: UInt32, _ characters: Int) {
                        for shift in stride(from: 18, to: 18 - 6 * characters, by: -6) {
                            out[position] = alphabet[Int(chunk >> UInt32(shift) & 63)]
                            position += 1
                        }
                    }
                    while index + 3 <= bytes.count {
                        put(UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]), 4)
                        index += 3
                    }
                    switch rest {
                    case 1: put(UInt32(bytes[index]) << 16, 2)
                    case 2: put(UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8, 3)
                    default: break
                    }
                    return position
                }
            }
        }
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

    /// Each character's 6 bits already shifted to its place in a 4-character group: entry `256 × k + c` is
    /// character `c` at position `k`, so a group is four lookups ORed together. Characters outside the
    /// alphabet have bits above the 24 a group fills, so one check after the loop finds them all.
    private static let groupTable: [UInt32] = (0..<4).flatMap { position in
        values.map { $0 == 0xff ? 0xff00_0000 : UInt32($0) << UInt32(18 - 6 * position) }
    }

    /// Decodes four characters into three bytes per step, with no test per character: tokens are decoded on
    /// every notification, and a payload is about 10 KB of base64url.
    private static func decode(buffer input: UnsafeBufferPointer<UInt8>) throws -> Data {
        let outputCount = input.count / 4 * 3 + max(0, input.count % 4 - 1)
        let whole = input.count & ~3
        var data = Data(count: outputCount)
        let failure: CryptoError? = data.withUnsafeMutableBytes { output in
            groupTable.withUnsafeBufferPointer { table in
                var outside: UInt32 = 0
                var out = 0
                var index = 0
                while index < whole {
                    let group = table[Int(input[index])] | table[256 + Int(input[index + 1])]
                        | table[512 + Int(input[index + 2])] | table[768 + Int(input[index + 3])]
                    outside |= group
                    if out + 4 <= outputCount {
                        // Four bytes written, three kept: the next group overwrites the fourth.
                        output.storeBytes(of: (group << 8).bigEndian, toByteOffset: out, as: UInt32.self)
                    } else {
                        output[out] = UInt8(truncatingIfNeeded: group >> 16)
                        output[out + 1] = UInt8(truncatingIfNeeded: group >> 8)
                        output[out + 2] = UInt8(truncatingIfNeeded: group)
                    }
                    out += 3
                    index += 4
                }
                if outside & 0xff00_0000 != 0 { return firstInvalidGroup(input[..<whole]) }
                var accumulator: UInt32 = 0
                var bits = 0
                while index < input.count {
                    let value = values[Int(input[index])]
                    if value == 0xff { return invalid(input[index...index]) }
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
                return accumulator == 0 ? nil : CryptoError(.invalidEncoding, "base64url has non-zero trailing bits")
            }
        }
        if let failure { throw failure }
        return data
    }

    /// Why the first group holding a character outside the alphabet is refused.
    private static func firstInvalidGroup(_ groups: Slice<UnsafeBufferPointer<UInt8>>) -> CryptoError {
        var start = groups.startIndex
        while start < groups.endIndex, !groups[start..<(start + 4)].contains(where: { values[Int($0)] == 0xff }) {
            start += 4
        }
        return invalid(groups[start..<min(start + 4, groups.endIndex)])
    }

    private static func invalid(_ characters: Slice<UnsafeBufferPointer<UInt8>>) -> CryptoError {
        characters.contains(UInt8(ascii: "="))
            ? CryptoError(.invalidEncoding, "base64url must not be padded")
            : CryptoError(.invalidEncoding, "invalid base64url character")
    }
}
