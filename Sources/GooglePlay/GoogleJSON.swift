import Foundation
import StrictJSON

/// Google's JSON as StoreSync keeps it for on-call.
enum GoogleJSON {
    /// `json` without the whitespace between tokens (Google pretty-prints by default), byte for byte otherwise:
    /// what is kept for on-call is what Google sent. `json` must be valid JSON.
    ///
    /// Runs on every answer read, so it works on the raw bytes: an answer with no whitespace outside its strings
    /// (Google's usual) is returned as it is, without a copy; any other is copied once into a buffer of its size,
    /// strings whole, the rest byte by byte.
    static func compact(_ json: Data) -> Data {
        json.withUnsafeBytes { input in
            guard let first = firstWhitespace(in: input) else { return json }
            var output = Data(count: input.count)
            let length = output.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) -> Int in
                var written = 0
                func keep(_ range: Range<Int>) {
                    UnsafeMutableRawBufferPointer(rebasing: output[written..<(written + range.count)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: input[range]))
                    written += range.count
                }
                keep(0..<first)
                var position = first
                while position < input.count {
                    let byte = input[position]
                    if byte == UInt8(ascii: "\"") {
                        let end = stringEnd(from: position, in: input)
                        keep(position..<end)
                        position = end
                    } else {
                        if !isWhitespace(byte) {
                            output[written] = byte
                            written += 1
                        }
                        position += 1
                    }
                }
                return written
            }
            output.count = length
            return output
        }
    }

    /// Where the first whitespace outside a string is, or nil when there is none.
    private static func firstWhitespace(in bytes: UnsafeRawBufferPointer) -> Int? {
        var position = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position = stringEnd(from: position, in: bytes)
            } else if isWhitespace(byte) {
                return position
            } else {
                position += 1
            }
        }
        return nil
    }

    /// Just past the closing quote of the string that opens at `start`: an escaped quote does not close it.
    private static func stringEnd(from start: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        var position = start + 1
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""): return position + 1
            case UInt8(ascii: "\\"): position += 2
            default: position += 1
            }
        }
        return bytes.count
    }

    /// JSON's insignificant whitespace (RFC 8259 §2).
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// How Google's JSON is read: with `JSONReader`, as Apple's is. Times are RFC 3339 strings (`readGoogleTime`),
/// 64-bit integers decimal strings or numbers (Google's JSON mapping of `int64`: `readLenientInteger`), and some
/// 32-bit enums arrive as strings in its own examples (`readLenientInteger` too). Every reader of Google's answers
/// and notifications goes through these so all accept the same spellings.
extension JSONReader {
    /// Google's `google-datetime` (RFC 3339, see `GoogleTimestamp`), or nil for `null`.
    mutating func readGoogleTime() throws -> Date? {
        try readString(expected: "an RFC 3339 time", GoogleTimestamp.parse)
    }

    /// Reads a `oneof` object (`offerPhase`, `canceledStateContext`), handing each member to `member` to read
    /// or skip, and returns which case it holds: the key whose value is not `null` (the first in sorted order,
    /// should Google ever send more than one; a repeated key counts by its last value). nil for `null`, or for an
    /// object with no such key.
    mutating func readOneof(_ member: (inout JSONReader, JSONKey) throws -> Void) throws -> String? {
        try readOptional { reader in
            var present = Set<String>()
            try reader.readObject { reader, key in
                if try reader.peekKind() == .null {
                    present.remove(key.description)
                } else {
                    present.insert(key.description)
                }
                try member(&reader, key)
            }
            return present.min()
        } ?? nil
    }
}
